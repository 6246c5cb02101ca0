// Identifiers: UUID v7, so that ids sort by creation time.
import { v7 } from 'uuid';

export const newId = (): string => v7();

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => uuidPattern.test(value);

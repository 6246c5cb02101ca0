/** Emails are compared and stored trimmed and in lower case. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

// What a webhook may target is what any outbound request may reach: the server's one outbound guard.
export * from '../http/outbound';

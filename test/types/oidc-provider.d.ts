// oidc-provider 8 ships no types (9 does, but refuses Node 20); the tests use a handful of its calls.
declare module 'oidc-provider';

// The settings the LTI benchmark (bench/lti.ts) and its server process (bench/lti-server.ts) share:
// the issuer of every LTI message and the key sealing the platform's signing key in the database.
export const LTI_BENCH_CONFIG = {
  publicUrl: 'https://lms.bench.example',
  ssoSecretKey: 'bench-lti-secret-key-0123456789abcdef',
} as const;

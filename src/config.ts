import { z } from 'zod';

/**
 * All configuration, read from the environment through one schema. This is the only module that
 * reads `process.env`; everything else receives a `Config`. Invalid configuration reports every
 * problem at once, so an operator fixes them in one go.
 */
const intFromEnv = (defaultValue: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(defaultValue);

const schema = z.object({
  PORT: intFromEnv(8787, 0, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z
    .string()
    .default('sqlite:./data/gatehouse.sqlite')
    .refine((url) => /^(sqlite:|postgres(ql)?:\/\/)/.test(url), {
      message: 'must start with sqlite: or postgres:// (e.g. sqlite:./data/gatehouse.sqlite, sqlite::memory:, postgres://user:password@127.0.0.1:5432/gatehouse)',
    }),
  /** `auto`: pending migrations are applied on start. `off`: the start refuses a database they are pending on (`npm run migrate` applies them). */
  DB_MIGRATE: z.enum(['auto', 'off']).default('auto'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
  GATEWAY_BOOTSTRAP_API_KEY: z
    .string()
    .min(16, 'must be at least 16 characters')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .optional(),
  GATEWAY_SECRET_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (32 bytes)')
    .optional(),
  BODY_LIMIT_BYTES: intFromEnv(1024 * 1024, 1),
  // Deeper JSON would overflow the stack where it is serialised; the ceiling keeps it so.
  JSON_MAX_DEPTH: intFromEnv(64, 1, 1000),
  API_KEY_CACHE_TTL_MS: intFromEnv(5000, 0, 600_000),
  SHUTDOWN_TIMEOUT_MS: intFromEnv(10_000, 0),
  // A client gets this long to send a request's headers, and then its whole body: slow clients
  // would otherwise hold connections for Node's default 300 s.
  HTTP_HEADERS_TIMEOUT_MS: intFromEnv(10_000, 1),
  HTTP_REQUEST_TIMEOUT_MS: intFromEnv(30_000, 1),
  SSE_KEEPALIVE_MS: intFromEnv(15_000, 100),
  METRICS_TOKEN: z.string().min(1).optional(),
  GRAPHQL_MAX_DEPTH: intFromEnv(16, 1),
  GRAPHQL_MAX_ALIASES: intFromEnv(30, 1),
  GRAPHQL_MAX_COST: intFromEnv(20_000, 1),
  GRAPHQL_MAX_TOKENS: intFromEnv(5_000, 1),
  RUN_CONCURRENCY: intFromEnv(8, 1, 1000),
  RUN_SWEEP_INTERVAL_MS: intFromEnv(30_000, 100),
  /** How long an instance's claim on a run it executes holds unless renewed (renewed every third of it). */
  RUN_LEASE_MS: intFromEnv(15_000, 300),
  MODEL_TIMEOUT_MS: intFromEnv(60_000, 100),
  /** Retries of a chat/embeddings upstream call on 429, 5xx or a connection error, before its first byte. */
  MODEL_MAX_RETRIES: intFromEnv(2, 0, 10),
  /** First retry's wait; each next one doubles (a Retry-After of up to 10 s is honoured instead). */
  MODEL_RETRY_BACKOFF_MS: intFromEnv(200, 0, 60_000),
});

// node:http refuses a headers timeout longer than the request timeout (headers are part of it).
const checked = schema
  .refine((c) => c.HTTP_HEADERS_TIMEOUT_MS <= c.HTTP_REQUEST_TIMEOUT_MS, {
    message: 'must not be greater than HTTP_REQUEST_TIMEOUT_MS',
    path: ['HTTP_HEADERS_TIMEOUT_MS'],
  })
  // On SQLite a generated key is kept beside the database file; a server database has no such
  // place, and every instance on it must encrypt with the same key.
  .refine((c) => c.DATABASE_URL.startsWith('sqlite:') || c.GATEWAY_SECRET_KEY !== undefined, {
    message: 'is required when DATABASE_URL is a postgres:// URL (every instance on the database needs the same key)',
    path: ['GATEWAY_SECRET_KEY'],
  });

export type Config = z.infer<typeof schema>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

export function loadConfig(env: Record<string, string | undefined> = process.env): ConfigResult {
  // Empty strings mean "unset", as shells and .env files commonly produce them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = checked.safeParse(cleaned);
  if (parsed.success) return { ok: true, config: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`),
  };
}

/** A config for tests and tools: defaults plus overrides, validated like the real thing. */
export function configFrom(overrides: Record<string, string | number | undefined> = {}): Config {
  const env = Object.fromEntries(Object.entries(overrides).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));
  const result = loadConfig(env);
  if (!result.ok) throw new Error(`Invalid configuration:\n${result.problems.join('\n')}`);
  return result.config;
}

export type Database = { dialect: 'sqlite'; file: string } | { dialect: 'postgresql'; url: string };

/** `sqlite:./data/x.sqlite` → the file `./data/x.sqlite` (`sqlite::memory:` → `:memory:`); `postgres://…` → that server URL. */
export function databaseOf(config: Pick<Config, 'DATABASE_URL'>): Database {
  const url = config.DATABASE_URL;
  return url.startsWith('sqlite:') ? { dialect: 'sqlite', file: url.slice('sqlite:'.length) } : { dialect: 'postgresql', url };
}

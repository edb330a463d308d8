import type pg from 'pg';
import { PostgresDialect } from 'kysely';

export interface PostgresOptions {
  url: string;
  poolSize?: number;
}

const INT8_OID = 20;

/** Splits our own `schema` query parameter off the URL; the schema is created when missing. */
export function parsePostgresUrl(url: string): { connectionString: string; schema: string | undefined } {
  const u = new URL(url);
  const schema = u.searchParams.get('schema') ?? undefined;
  u.searchParams.delete('schema');
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error('the schema parameter of DATABASE_URL must be a lower-case SQL identifier');
  }
  return { connectionString: u.href, schema };
}

export async function postgresDialect(opts: PostgresOptions): Promise<{ dialect: PostgresDialect; pool: pg.Pool; schema: string | undefined }> {
  const { connectionString, schema } = parsePostgresUrl(opts.url);
  // Imported here so that the driver is loaded only when PostgreSQL is used.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString,
    max: opts.poolSize ?? 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
    // Timestamps are bigint columns; they fit a JavaScript number for the next 285,000 years.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  return { dialect: new PostgresDialect({ pool }), pool, schema };
}

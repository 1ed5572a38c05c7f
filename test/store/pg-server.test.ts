import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { postgresUnavailable, startPostgres } from '../support/postgres.js';

/** Postmasters (not the runuser wrapping one) listening on `port`. */
function serversOn(port: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes('/bin/postgres -D') && !l.includes('runuser') && l.includes(` -p ${port} `));
}

const missing = postgresUnavailable();

/** The throwaway PostgreSQL of the port and cluster tests leaves no server behind when stopped. */
describe.skipIf(missing)(`test PostgreSQL server${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('stop() ends the postmaster itself (as root the child is runuser, which passes no signal on)', async () => {
    const server = await startPostgres();
    const port = new URL(server.url).port;
    expect(serversOn(port)).toHaveLength(1);
    await server.stop();
    expect(serversOn(port)).toEqual([]);
  }, 60_000);
});

/**
 * The daemon's process-level safety net (src/daemon/system/safety-net.ts, issue 27 item 1): before the
 * daemon serves, an error nothing caught is fatal (exit 70, logged); once it serves, an uncaught exception
 * or an unhandled rejection is logged with its stack and the process keeps running and serving. Each case
 * runs in its own real Node process (the built module), since the handlers are process-wide.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../dist/daemon/system/safety-net.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'router-safety-net-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a script with the net installed (and contained when `serving`); returns its exit code, stdout and the log. */
async function run(name: string, serving: boolean, body: string) {
  const log = join(dir, `${name}.log`);
  const script = `
    import { createServer } from 'node:http';
    const { installSafetyNet } = await import(${JSON.stringify(MODULE)});
    const net = installSafetyNet(${JSON.stringify(log)});
    ${serving ? 'net.contain();' : ''}
    ${body}
  `;
  const r = await execa(process.execPath, ['--input-type=module', '-e', script], { reject: false, timeout: 20_000 });
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    // no log written
  }
  return { code: r.exitCode, stdout: r.stdout, log: text };
}

describe('safety net', () => {
  it('once serving, a throw in a callback and an unhandled rejection are logged and the server keeps answering', async () => {
    const r = await run(
      'serving',
      true,
      `
      const server = createServer((req, res) => {
        if (req.url === '/boom') setImmediate(() => { throw new Error('boom in a callback'); });
        if (req.url === '/reject') Promise.reject(new Error('nobody awaited this'));
        res.end('ok');
      });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const url = 'http://127.0.0.1:' + server.address().port;
      const answers = [];
      for (const path of ['/boom', '/reject', '/boom', '/health']) {
        answers.push((await fetch(url + path)).status);
        await new Promise((r) => setTimeout(r, 20));
      }
      console.log(JSON.stringify({ answers, contained: net.contained }));
      server.close();
      `,
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ answers: [200, 200, 200, 200], contained: 3 });
    expect(r.log).toMatch(/ERROR uncaught exception \(contained; the daemon keeps serving\): Error: boom in a callback\n\s+at /);
    expect(r.log).toMatch(/ERROR unhandled rejection \(contained; the daemon keeps serving\): Error: nobody awaited this/);
    expect(r.log.match(/contained;/g)).toHaveLength(3);
  });

  it('before the daemon serves (start-up), an uncaught error is fatal: logged, exit 70', async () => {
    const r = await run('starting', false, `setImmediate(() => { throw new Error('start-up failed'); }); setTimeout(() => console.log('still alive'), 2000);`);
    expect(r.code).toBe(70);
    expect(r.stdout).toBe('');
    expect(r.log).toMatch(/FATAL uncaught exception: Error: start-up failed/);
  });
});

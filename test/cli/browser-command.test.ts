/**
 * Which program `router login` opens the login URL with: `BROWSER` first (the xdg-utils / Python webbrowser
 * convention, honoured on every platform, not only where xdg-open reads it), else the desktop's opener.
 */
import { describe, expect, it } from 'vitest';
import { browserCommand } from '../../src/cli/commands/login.js';

const URL_ = 'http://127.0.0.1:1/authorize?a=1&b=2';

describe('browserCommand', () => {
  it('uses the desktop opener when BROWSER is unset or empty', () => {
    expect(browserCommand(URL_, {}, 'darwin')).toEqual(['open', [URL_]]);
    expect(browserCommand(URL_, {}, 'linux')).toEqual(['xdg-open', [URL_]]);
    expect(browserCommand(URL_, { BROWSER: '' }, 'win32')).toEqual(['explorer', [URL_]]);
  });

  it('runs BROWSER with the URL appended, words split without a shell, on macOS too', () => {
    expect(browserCommand(URL_, { BROWSER: 'firefox' }, 'darwin')).toEqual(['firefox', [URL_]]);
    expect(browserCommand(URL_, { BROWSER: '/usr/bin/node /tmp/fake.mjs' }, 'linux')).toEqual(['/usr/bin/node', ['/tmp/fake.mjs', URL_]]);
  });

  it('takes the first entry of a list and puts the URL where %s is', () => {
    expect(browserCommand(URL_, { BROWSER: 'w3m -o x %s:firefox' }, 'linux')).toEqual(['w3m', ['-o', 'x', URL_]]);
    expect(browserCommand(URL_, { BROWSER: ':chromium --new-window' }, 'linux')).toEqual(['chromium', ['--new-window', URL_]]);
    expect(browserCommand(URL_, { BROWSER: 'msedge;firefox' }, 'win32')).toEqual(['msedge', [URL_]]);
  });
});

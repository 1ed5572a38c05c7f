import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { families } from '../../src/daemon/families/registry.js';
import { ReplyError } from '../../src/daemon/families/family.js';
import { CodecError } from '../../src/daemon/translate/errors.js';
import { caseFile, caseInput, familyCases, readCaseJson, runFamilyCase, type FamilyCase } from './golden-support.js';

/**
 * Golden cases of every registered endpoint family (families/registry.ts), like the chat codecs' corpus
 * (test/translate/golden.test.ts): registering a family runs its cases here, and a family without a case
 * fails. A case expects its files: `call.json` (what the executor and the usage row see), `upstream-request.json`
 * (the request for the case's target), `response.json` (the client's reply, usage, cost, notes), or `error.json`
 * (the 400 a bad body or an unfit target gets), or `reply-error.json` (an upstream reply the codec cannot read).
 */

for (const family of families) {
  describe(`family ${family.name}`, () => {
    const cases = familyCases(family.name);
    it('has golden cases', () => expect(cases.length, `test/fixtures/families/${family.name}/ has no case`).toBeGreaterThan(0));
    for (const name of cases) {
      it(name, () => {
        if (existsSync(caseFile(family.name, name, 'error.json'))) {
          const expected = readCaseJson(family.name, name, 'error.json');
          const info = readCaseJson(family.name, name, 'case.json') as FamilyCase;
          let thrown: unknown;
          try {
            family.encode(family.read(caseInput(family.name, name)), info.target);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).toBeInstanceOf(CodecError);
          const e = thrown as CodecError;
          expect({ status: e.status, code: e.code, param: e.param, message: e.message }).toEqual(expected);
          return;
        }
        if (existsSync(caseFile(family.name, name, 'reply-error.json'))) {
          // An unreadable upstream reply: a ReplyError, which the runner turns into a 502 attempt failure.
          const expected = readCaseJson(family.name, name, 'reply-error.json');
          let thrown: unknown;
          try {
            runFamilyCase(family, name);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).toBeInstanceOf(ReplyError);
          expect({ reason: (thrown as ReplyError).reason, message: (thrown as ReplyError).message }).toEqual(expected);
          return;
        }
        const got = runFamilyCase(family, name);
        expect(got.call, 'call').toEqual(readCaseJson(family.name, name, 'call.json'));
        expect(got.upstream, 'upstream request').toEqual(readCaseJson(family.name, name, 'upstream-request.json'));
        expect(got.response, 'client reply').toEqual(readCaseJson(family.name, name, 'response.json'));
      });
    }
  });
}

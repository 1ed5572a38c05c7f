import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { RECORDED_DIR, loadRecording } from './recordings.js';

const FOLDERS = ['openai', 'anthropic/llm-anthropic', 'anthropic/pydantic-ai'];
const files = FOLDERS.flatMap((dir) =>
  readdirSync(join(RECORDED_DIR, dir))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `${dir}/${f}`),
);

describe('recorded cassettes', () => {
  it('are all present, with their README and licence files', () => {
    expect(files.filter((f) => f.startsWith('openai/'))).toHaveLength(42);
    expect(files.filter((f) => f.startsWith('anthropic/'))).toHaveLength(22);
    for (const extra of ['openai/README.md', 'openai/LICENSE', 'anthropic/README.md', 'anthropic/llm-anthropic/LICENSE', 'anthropic/pydantic-ai/LICENSE']) {
      expect(readdirSync(join(RECORDED_DIR, extra, '..'))).toContain(extra.split('/').at(-1));
    }
  });

  it.each(files)('%s parses into normalized interactions', (file) => {
    const list = loadRecording(file);
    expect(list.length).toBeGreaterThan(0);
    for (const { request, response } of list) {
      expect(request.method).toMatch(/^(GET|POST|HEAD)$/);
      expect(request.url).toMatch(/^https:\/\//);
      if (request.method === 'POST' && !request.url.includes('/audio/')) expect(request.json).toBeTypeOf('object');
      expect(Number.isInteger(response.status)).toBe(true);
      for (const name of Object.keys(response.headers)) expect(name).toBe(name.toLowerCase());
      if (request.method === 'HEAD') continue;
      if (response.isStream) {
        const data: string[] = [];
        createParser({ onEvent: (e) => data.push(e.data) }).feed(response.body);
        expect(data.length).toBeGreaterThan(0);
        for (const d of data) if (d !== '[DONE]') expect(() => JSON.parse(d)).not.toThrow();
      } else {
        expect(() => JSON.parse(response.body)).not.toThrow();
      }
    }
  });

  it('reads both recorders the same way', () => {
    const goVcr = loadRecording('openai/chat-basic.yaml')[0]!;
    expect(goVcr.request).toMatchObject({ method: 'POST', url: 'https://api.openai.com/v1/chat/completions' });
    expect(goVcr.request.headers['content-type']).toBe('application/json');
    expect(goVcr.response).toMatchObject({ status: 200, isStream: false });
    expect(JSON.parse(goVcr.response.body).object).toBe('chat.completion');

    const vcrpy = loadRecording('anthropic/llm-anthropic/test_prompt.yaml')[0]!;
    expect(vcrpy.request.headers['anthropic-version']).toBe('2023-06-01');
    expect(vcrpy.response).toMatchObject({ status: 200, isStream: true });
    expect(vcrpy.response.body.startsWith('event: message_start\ndata: {')).toBe(true);

    const parsed = loadRecording('anthropic/pydantic-ai/test_anthropic_model_instructions.yaml')[0]!;
    expect(parsed.request.json).toMatchObject({ model: 'claude-3-opus-latest', stream: false });
    expect(JSON.parse(parsed.response.body).content[0].text).toBe('The capital of France is Paris.');
  });

  it('decodes a !!binary gzip body as vcrpy stores undecoded replies', () => {
    const body = gzipSync(Buffer.from('{"type":"message","content":[]}')).toString('base64');
    const cassette = [
      'interactions:',
      '- request:',
      '    body: null',
      '    headers: {anthropic-version: [\'2023-06-01\']}',
      '    method: POST',
      '    uri: https://api.anthropic.com/v1/messages',
      '  response:',
      '    body:',
      `      string: !!binary |\n        ${body}`,
      '    headers: {Content-Type: [application/json], Content-Encoding: [gzip]}',
      '    status: {code: 200, message: OK}',
      'version: 1',
    ].join('\n');
    const file = join(mkdtempSync(join(tmpdir(), 'cassette-')), 'binary.yaml');
    writeFileSync(file, cassette);
    const [it0] = loadRecording(file);
    expect(it0!.request.body).toBeUndefined();
    expect(JSON.parse(it0!.response.body)).toEqual({ type: 'message', content: [] });
    expect(it0!.response.headers['content-encoding']).toBe('gzip');
  });
});

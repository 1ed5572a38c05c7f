/**
 * Audio through router (issue 17 item 2), a real daemon and the official `openai` SDK unmodified: speech
 * streamed as it arrives (binary and `stream_format: "sse"`), transcriptions and translations (multipart,
 * every response_format, timestamp granularities, streamed transcript events), to OpenAI, Groq and an
 * OpenAI-compatible node; recorded OpenAI replies replayed; failover, key scope, cost, the 25 MiB limit.
 */
import { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyEnv } from '../../support/proxy-env.js';
import { audioSeconds, audioTokens, speechChunks } from '../../mocks/formats/media.js';
import { tokenCount } from '../../mocks/reply.js';
import { combo, rowsOf, sdk, startMediaEnv, traceOf } from './helpers.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startMediaEnv();
});
afterEach(() => env.mock.reset());
afterAll(async () => {
  await env?.stop();
});

const AUDIO = Buffer.alloc(40_000, 7);
const audioFile = () => toFile(AUDIO, 'talk.mp3', { type: 'audio/mpeg' });
const MiB = 1024 * 1024;

describe('POST /v1/audio/speech', () => {
  it('streams the audio through as it arrives: the first bytes reach the client before the mock has sent the rest', async () => {
    env.mock.handle((req) => (req.endpoint === 'openai.speech' ? { type: 'slow-stream', intervalMs: 300 } : undefined));
    const t0 = performance.now();
    const response = await sdk(env).audio.speech.create({ model: 'openai/tts-1', voice: 'alloy', input: 'Hello there, listener.' });
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    const reader = response.body!.getReader();
    const first = await reader.read();
    const tFirst = performance.now() - t0;
    const chunks: Uint8Array[] = [first.value!];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    const tEnd = performance.now() - t0;
    // The mock sends 4 chunks 300 ms apart: the first arrives ~900 ms before the last is sent.
    expect(tEnd - tFirst).toBeGreaterThan(600);
    expect(Buffer.concat(chunks)).toEqual(Buffer.concat(speechChunks('Hello there, listener.')));
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ endpoint: '/v1/audio/speech', provider: 'openai', model: 'tts-1', status: 200, streamed: true });
    // tts-1: $15 per million characters.
    expect(row.costUsd).toBeCloseTo((22 * 15) / 1e6, 12);
  });

  it('stream_format "sse" passes the speech events through; the done event\'s usage lands on the row', async () => {
    const response = await sdk(env).audio.speech.create({ model: 'openai/gpt-4o-mini-tts', voice: 'coral', input: 'Hi!', stream_format: 'sse' });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await response.text();
    const events = text.split('\n\n').filter(Boolean).map((e) => JSON.parse(e.slice('data: '.length)));
    expect(events.map((e) => e.type)).toEqual(['speech.audio.delta', 'speech.audio.delta', 'speech.audio.delta', 'speech.audio.delta', 'speech.audio.done']);
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ tokensIn: tokenCount('Hi!'), tokensOut: 400 });
  });

  it('Groq speech (same format) and a provider without speech refused with a 400', async () => {
    const response = await sdk(env).audio.speech.create({ model: 'groq/playai-tts', voice: 'Fritz-PlayAI', input: 'Hey', response_format: 'wav' });
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(env.mock.requests[0]!.headers.authorization).toBe('Bearer gsk-groq-media');
    const err = await sdk(env)
      .audio.speech.create({ model: 'gemini/gemini-2.5-flash', voice: 'alloy', input: 'x' })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'endpoint_not_supported', param: 'model' });
  });
});

describe('POST /v1/audio/transcriptions and /translations', () => {
  it('whisper-1 json: the file is re-sent as multipart with the model rewritten; cost by the reported duration', async () => {
    const { data, response } = await sdk(env).audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile(), language: 'en' }).withResponse();
    expect(data.text).toBe('Hello from the mock.');
    const sent = env.mock.requests[0]!;
    expect(sent.endpoint).toBe('openai.transcriptions');
    expect(sent.form!.fields).toMatchObject({ model: 'whisper-1', language: 'en' });
    expect(sent.form!.files[0]).toMatchObject({ field: 'file', filename: 'talk.mp3', mimeType: 'audio/mpeg', size: AUDIO.length });
    expect(sent.form!.files[0]!.data.equals(AUDIO)).toBe(true);
    const [row] = await rowsOf(env, traceOf(response));
    const seconds = audioSeconds(AUDIO.length);
    expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', model: 'whisper-1', tokensIn: 0 });
    expect(JSON.parse(row.notes)).toMatchObject({ audioSeconds: seconds });
    expect(row.costUsd).toBeCloseTo((seconds * 0.006) / 60, 12);
  });

  it('verbose_json with word and segment timestamps, srt, vtt and text pass through as the upstream wrote them', async () => {
    const verbose = await sdk(env).audio.transcriptions.create({
      model: 'openai/whisper-1',
      file: await audioFile(),
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expect(verbose.duration).toBe(audioSeconds(AUDIO.length));
    expect(verbose.words!.map((w) => w.word)).toEqual(['Hello', 'from', 'the', 'mock.']);
    expect(verbose.segments).toHaveLength(1);
    expect(env.mock.requests[0]!.form!.fields['timestamp_granularities[]']).toEqual(['word', 'segment']);
    const srt = await sdk(env).audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile(), response_format: 'srt' });
    expect(srt).toBe(`1\n00:00:00,000 --> 00:00:03,000\nHello from the mock.\n\n`);
    const vtt = await sdk(env).audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile(), response_format: 'vtt' });
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:00.000 --> 00:00:03.000\n/);
    const text = await sdk(env).audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile(), response_format: 'text' });
    expect(text).toBe('Hello from the mock.\n');
  });

  it('stream: true relays the transcript events as they come; the row is priced by the done event\'s tokens', async () => {
    env.mock.handle((req) => (req.endpoint === 'openai.transcriptions' ? { type: 'text', text: 'one two three four five six' } : undefined));
    const stream = await sdk(env).audio.transcriptions.create({ model: 'openai/gpt-4o-transcribe', file: await audioFile(), stream: true });
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    expect(events.map((e) => e.type)).toEqual(['transcript.text.delta', 'transcript.text.delta', 'transcript.text.delta', 'transcript.text.done']);
    expect(events.slice(0, 3).map((e) => e.delta).join('')).toBe('one two three four five six');
    const rows = await eventuallyRow('/v1/audio/transcriptions', 'gpt-4o-transcribe');
    const audio = audioTokens(AUDIO.length);
    const out = tokenCount('one two three four five six');
    expect(rows).toMatchObject({ streamed: true, tokensIn: audio, tokensOut: out });
    expect(rows.costUsd).toBeCloseTo((audio * 6 + out * 10) / 1e6, 12);
  });

  it('Groq (same format): whisper-large-v3-turbo; a short file is billed Groq\'s 10 s minimum', async () => {
    const { response } = await sdk(env).audio.transcriptions.create({ model: 'groq/whisper-large-v3-turbo', file: await audioFile() }).withResponse();
    expect(env.mock.requests[0]!.headers.authorization).toBe('Bearer gsk-groq-media');
    const [row] = await rowsOf(env, traceOf(response));
    expect(row.costUsd).toBeCloseTo((10 * 0.04) / 3600, 12);
  });

  it('translations to an OpenAI-compatible node; the recorded OpenAI reply replays through router', async () => {
    env.mock.handle((req) => (req.endpoint === 'openai.translations' ? { type: 'replay', file: 'openai/audio-translation-basic.yaml' } : undefined));
    const reply = await sdk(env).audio.translations.create({ model: 'node/whisper-1', file: await audioFile() });
    expect(reply.text).toBe('The sun rises in the east and sets in the west. This simple fact has been observed by humans for thousands of years.');
    expect(env.mock.requests[0]!.form!.fields.model).toBe('whisper-1');
    env.mock.handle((req) => (req.endpoint === 'openai.transcriptions' ? { type: 'replay', file: 'openai/audio-transcription-basic.yaml', chunkBytes: 7 } : undefined));
    const { data, response } = await sdk(env).audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile() }).withResponse();
    expect(data.text).toMatch(/^The sun rises in the east/);
    const [row] = await rowsOf(env, traceOf(response));
    // The recording's usage says 7 seconds.
    expect(row.costUsd).toBeCloseTo((7 * 0.006) / 60, 12);
  });

  it('a combo fails over from OpenAI (503) to Groq; a model-scoped key is refused', async () => {
    await combo(env, 'stt', ['openai/whisper-1', 'groq/whisper-large-v3']);
    env.mock.handle((req) => (req.headers.authorization === 'Bearer sk-openai-media' ? { type: 'status', status: 503 } : undefined));
    const { data, response } = await sdk(env).audio.transcriptions.create({ model: 'stt', file: await audioFile() }).withResponse();
    expect(data.text).toBe('Hello from the mock.');
    const rows = await rowsOf(env, traceOf(response), 2);
    expect(rows.map((r) => [r.provider, r.status, r.combo]).sort()).toEqual([
      ['groq', 200, 'stt'],
      ['openai', 503, 'stt'],
    ]);
    // Both attempts got the whole file.
    expect(env.mock.requests.map((r) => r.form!.files[0]!.size)).toEqual([AUDIO.length, AUDIO.length]);
    env.mock.reset();
    const scoped = await env.router.createKey(['proxy', 'model:groq/*']);
    const err = await sdk(env, scoped)
      .audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile() })
      .catch((e) => e);
    expect(err.status).toBe(403);
    expect(env.mock.requests).toHaveLength(0);
  });

  it('the file limit at its edge: 25 MiB passes, 25 MiB + 1 byte is a 413 with the standard error body', async () => {
    const send = (bytes: number) => {
      const form = new FormData();
      form.set('model', 'openai/whisper-1');
      form.set('file', new Blob([new Uint8Array(bytes)], { type: 'audio/wav' }), 'long.wav');
      return fetch(`${env.router.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${env.key}` }, body: form });
    };
    const ok = await send(25 * MiB);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(env.mock.requests[0]!.form!.files[0]!.size).toBe(25 * MiB);
    env.mock.reset();
    const over = await send(25 * MiB + 1);
    expect(over.status).toBe(413);
    const body = await over.json();
    expect(body).toEqual({ error: { message: "The file 'file' exceeds the limit of 26214400 bytes.", type: 'request_too_large', code: 'payload_too_large' } });
    expect(over.headers.get('x-router-trace-id')).toBeTruthy();
    expect(env.mock.requests).toHaveLength(0);
  });

  it('bad input is a 400 naming the field: no file, unknown response_format', async () => {
    const form = new FormData();
    form.set('model', 'openai/whisper-1');
    const res = await fetch(`${env.router.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${env.key}` }, body: form });
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe('file');
    const err = await sdk(env)
      .audio.transcriptions.create({ model: 'openai/whisper-1', file: await audioFile(), response_format: 'xml' as any })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error.param).toBe('response_format');
  });
});

/** The latest row of an endpoint and model (streams: the SDK's stream object hides the response headers). */
async function eventuallyRow(endpoint: string, model: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const r = await env.router.manage('GET', '/api/logs?limit=50');
    const row = (r.json.logs as any[]).find((l) => l.endpoint === endpoint && l.model === model);
    if (row) return row;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('no row');
}

describe('speech stream failures', () => {
  it('an upstream that dies mid-audio ends the client reply early and the row records the error', async () => {
    env.mock.handle((req) => (req.endpoint === 'openai.speech' ? { type: 'drop-mid-stream', afterChunks: 2, then: { type: 'text', chunks: 4 } } : undefined));
    const res = await fetch(`${env.router.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/tts-1', voice: 'alloy', input: 'cut short' }),
    });
    expect(res.status).toBe(200);
    const got = await res.arrayBuffer().then(
      (b) => b.byteLength,
      () => -1,
    );
    // Either the body errors or it ends short: never the whole 64 KiB.
    expect(got).toBeLessThan(4 * 16 * 1024);
    const [row] = await rowsOf(env, res.headers.get('x-router-trace-id')!);
    expect(row.error).toMatch(/stream broke|upstream/i);
  });
});

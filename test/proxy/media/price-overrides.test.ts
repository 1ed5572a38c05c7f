/**
 * One price table for every endpoint (issue 17 left-over 1): a user's `PUT /api/pricing` override of a
 * media or rerank model's unit rate (per image, per audio minute, per character, per search unit) changes
 * the cost on the next usage row, and `DELETE` restores the shipped default. Real daemon, the official
 * `openai` SDK, the mock upstream speaking OpenAI's and Cohere's formats.
 */
import { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyEnv } from '../../support/proxy-env.js';
import { audioSeconds } from '../../mocks/formats/media.js';
import { rowsOf, sdk, startMediaEnv, traceOf } from './helpers.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startMediaEnv();
  await env.router.addConnection({ provider: 'cohere', apiKey: 'co-media', providerSpecificData: { baseUrl: env.mock.cohereBase } });
});
afterEach(() => env.mock.reset());
afterAll(async () => {
  await env?.stop();
});

async function price(path: string, body?: unknown): Promise<any> {
  const r = await env.router.manage(body === undefined ? 'DELETE' : 'PUT', `/api/pricing/${path}`, body);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json;
}

async function rerankRow(): Promise<any> {
  const res = await fetch(`${env.router.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'cohere/rerank-v3.5', query: 'capital', documents: ['Paris', 'Berlin'] }),
  });
  expect(res.status).toBe(200);
  const [row] = await rowsOf(env, res.headers.get('x-router-trace-id')!);
  return row;
}

describe('price overrides reach media and rerank rows', () => {
  it('an image: dall-e-3 per image by quality/size, then the default again', async () => {
    const generate = async () => {
      const { response } = await sdk(env).images.generate({ model: 'openai/dall-e-3', prompt: 'a lighthouse', size: '1792x1024', quality: 'hd' }).withResponse();
      return (await rowsOf(env, traceOf(response)))[0];
    };
    expect((await generate()).costUsd).toBeCloseTo(0.12, 9);
    const entry = await price('openai/dall-e-3', { input: 0, output: 0, perImage: { 'hd/*': 0.5, '*/*': 0.2 } });
    expect(entry).toMatchObject({ source: 'override', hasDefault: true, perImage: { 'hd/*': 0.5, '*/*': 0.2 } });
    expect((await generate()).costUsd).toBeCloseTo(0.5, 9);
    await price('openai/dall-e-3');
    expect((await generate()).costUsd).toBeCloseTo(0.12, 9);
  });

  it('an image priced by tokens: gpt-image-1 image output rate', async () => {
    await price('openai/gpt-image-1', { input: 1, output: 1, imageOutput: 100 });
    const { data, response } = await sdk(env).images.generate({ model: 'openai/gpt-image-1', prompt: 'a fox', quality: 'low' }).withResponse();
    const [row] = await rowsOf(env, traceOf(response));
    const u = data.usage!;
    expect(row.costUsd).toBeCloseTo((u.input_tokens * 1 + u.output_tokens * 100) / 1e6, 12);
    await price('openai/gpt-image-1');
  });

  it('a transcription: whisper-1 per audio minute', async () => {
    const file = Buffer.alloc(40_000, 7);
    const transcribe = async () => {
      const { response } = await sdk(env).audio.transcriptions.create({ model: 'openai/whisper-1', file: await toFile(file, 'a.mp3', { type: 'audio/mpeg' }) }).withResponse();
      return (await rowsOf(env, traceOf(response)))[0];
    };
    const seconds = audioSeconds(file.length);
    expect((await transcribe()).costUsd).toBeCloseTo((seconds * 0.006) / 60, 12);
    await price('openai/whisper-1', { input: 0, output: 0, perAudioMinute: 1.2, minAudioSeconds: 30 });
    // At least 30 s billed: the mock reports 3 s.
    expect((await transcribe()).costUsd).toBeCloseTo((30 * 1.2) / 60, 12);
    await price('openai/whisper-1');
  });

  it('speech: tts-1 per million characters', async () => {
    await price('openai/tts-1', { input: 0, output: 0, perMillionCharacters: 1000 });
    const response = await sdk(env).audio.speech.create({ model: 'openai/tts-1', voice: 'alloy', input: 'Hello' });
    await response.arrayBuffer();
    const [row] = await rowsOf(env, traceOf(response));
    expect(row.costUsd).toBeCloseTo((5 * 1000) / 1e6, 12);
    await price('openai/tts-1');
  });

  it('a rerank: Cohere per search unit', async () => {
    expect((await rerankRow()).costUsd).toBeCloseTo(0.002, 12);
    await price('cohere/rerank-v3.5', { input: 0, output: 0, perSearchUnit: 0.25 });
    expect((await rerankRow()).costUsd).toBeCloseTo(0.25, 12);
    await price('cohere/rerank-v3.5');
    expect((await rerankRow()).costUsd).toBeCloseTo(0.002, 12);
  });

  it('the price table lists the media defaults; a bad unit rate is a 400', async () => {
    const one = await env.router.manage('GET', '/api/pricing/gemini/imagen-4.0-generate-001');
    expect(one.json).toMatchObject({ input: 0, output: 0, perImage: 0.04, source: 'default' });
    const bad = await env.router.manage('PUT', '/api/pricing/openai/dall-e-3', { input: 0, output: 0, perImage: { 'not a key': 1 } });
    expect(bad.status).toBe(400);
    const negative = await env.router.manage('PUT', '/api/pricing/cohere/rerank-v3.5', { input: 0, output: 0, perSearchUnit: -1 });
    expect(negative.status).toBe(400);
  });
});

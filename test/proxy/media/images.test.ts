/**
 * Images through router (issue 17 item 1), a real daemon and the official `openai` SDK unmodified:
 * generations and multipart edits to OpenAI (same format), Gemini image models and Imagen (translated to
 * generateContent / :predict), failover in a combo, a key's model scope, usage rows with the right cost,
 * and the multipart body limit.
 */
import { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyEnv } from '../../support/proxy-env.js';
import { EDIT_IMAGE_TOKENS, GEMINI_IMAGE_TOKENS, gptImageOutputTokens, PNG_B64 } from '../../mocks/formats/media.js';
import { maskInstruction } from '../../../src/daemon/families/images/gemini.js';
import { loadRecording } from '../../mocks/recordings.js';
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

/** A 2x2 RGBA PNG mask: the top-left pixel fully transparent (the area to edit), the others opaque black. */
const MASK_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAD0lEQVR42mNggID/MOI/ABACAv4dxFh5AAAAAElFTkSuQmCC';
const png = () => toFile(Buffer.from(PNG_B64, 'base64'), 'in.png', { type: 'image/png' });

describe('POST /v1/images/generations', () => {
  it('OpenAI gpt-image-1: same-format passthrough; the row is priced by the reported image tokens', async () => {
    const { data, response } = await sdk(env)
      .images.generate({ model: 'openai/gpt-image-1', prompt: 'a red fox in snow', n: 2, size: '1024x1536', quality: 'high', background: 'transparent', output_format: 'png' })
      .withResponse();
    expect(data.data).toHaveLength(2);
    expect(data.data![0]!.b64_json).toBe(PNG_B64);
    expect(data.usage?.output_tokens).toBe(2 * gptImageOutputTokens('high', '1024x1536'));
    const sent = env.mock.requests.find((r) => r.endpoint === 'openai.images')!;
    expect(sent.json).toMatchObject({ model: 'gpt-image-1', n: 2, size: '1024x1536', quality: 'high', background: 'transparent', output_format: 'png' });
    const [row] = await rowsOf(env, traceOf(response));
    const textIn = tokenCount('a red fox in snow');
    const out = 2 * gptImageOutputTokens('high', '1024x1536');
    expect(row).toMatchObject({ endpoint: '/v1/images/generations', provider: 'openai', model: 'gpt-image-1', status: 200, tokensIn: textIn, tokensOut: out });
    // gpt-image-1: $5 per million text input tokens, $40 per million image output tokens.
    expect(row.costUsd).toBeCloseTo((textIn * 5 + out * 40) / 1e6, 9);
  });

  it('dall-e-3 with response_format url: the URL passes through; priced per image by quality and size', async () => {
    const { data, response } = await sdk(env).images.generate({ model: 'openai/dall-e-3', prompt: 'a lighthouse', size: '1792x1024', quality: 'hd', response_format: 'url' }).withResponse();
    expect(data.data![0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/image-/);
    expect(data.data![0]!.revised_prompt).toBe('A picture of a lighthouse');
    const [row] = await rowsOf(env, traceOf(response));
    expect(row.costUsd).toBeCloseTo(0.12, 9);
  });

  it('Gemini image model: translated to generateContent with image output and back to OpenAI b64_json', async () => {
    const { data, response } = await sdk(env).images.generate({ model: 'gemini/gemini-2.5-flash-image', prompt: 'a blue whale', size: '1536x1024' }).withResponse();
    expect(data.data![0]!.b64_json).toBe(PNG_B64);
    expect(data.data![0]!.revised_prompt).toBe('Here is the image.');
    const sent = env.mock.requests.find((r) => r.endpoint === 'gemini.generate')!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash-image:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('AIza-gemini-media');
    expect(sent.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a blue whale' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '3:2' } },
    });
    const [row] = await rowsOf(env, traceOf(response));
    const textIn = tokenCount('a blue whale');
    expect(row).toMatchObject({ provider: 'gemini', model: 'gemini-2.5-flash-image', tokensIn: textIn, tokensOut: GEMINI_IMAGE_TOKENS });
    expect(row.costUsd).toBeCloseTo((textIn * 0.3 + GEMINI_IMAGE_TOKENS * 30) / 1e6, 9);
  });

  it('Gemini image model with n = 3: three generateContent calls in one attempt, one reply, their tokens summed', async () => {
    const { data, response } = await sdk(env).images.generate({ model: 'gemini/gemini-2.5-flash-image', prompt: 'a red kite', n: 3 }).withResponse();
    expect(data.data).toHaveLength(3);
    expect(data.data!.every((d) => d.b64_json === PNG_B64)).toBe(true);
    const sent = env.mock.requests.filter((r) => r.endpoint === 'gemini.generate');
    expect(sent).toHaveLength(3);
    expect(sent.every((r) => JSON.stringify(r.json.generationConfig) === JSON.stringify({ responseModalities: ['TEXT', 'IMAGE'] }))).toBe(true);
    const textIn = tokenCount('a red kite');
    expect(data.usage).toMatchObject({ input_tokens: 3 * textIn, output_tokens: 3 * GEMINI_IMAGE_TOKENS });
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ provider: 'gemini', status: 200, tokensIn: 3 * textIn, tokensOut: 3 * GEMINI_IMAGE_TOKENS });
    expect(JSON.parse(row.notes)).toMatchObject({ images: 3 });
    expect(row.costUsd).toBeCloseTo((3 * textIn * 0.3 + 3 * GEMINI_IMAGE_TOKENS * 30) / 1e6, 9);
  });

  it('Imagen: translated to :predict (sampleCount, aspectRatio); url asked -> data URLs', async () => {
    const { data, response } = await sdk(env).images.generate({ model: 'gemini/imagen-4.0-generate-001', prompt: 'a cat', n: 3, size: '1024x1024', response_format: 'url' }).withResponse();
    expect(data.data).toHaveLength(3);
    expect(data.data![2]!.url).toBe(`data:image/png;base64,${PNG_B64}`);
    const sent = env.mock.requests.find((r) => r.endpoint === 'gemini.predict')!;
    expect(sent.json).toEqual({ instances: [{ prompt: 'a cat' }], parameters: { sampleCount: 3, aspectRatio: '1:1' } });
    const [row] = await rowsOf(env, traceOf(response));
    expect(row.costUsd).toBeCloseTo(3 * 0.04, 9);
  });

  it('stream: true relays the partial and completed image events; the row is priced by the completed event\'s usage', async () => {
    const stream = await sdk(env).images.generate({ model: 'openai/gpt-image-1', prompt: 'a kite', stream: true, partial_images: 2 });
    const types: string[] = [];
    let completed: any;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'image_generation.completed') completed = ev;
    }
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(completed.b64_json).toBe(PNG_B64);
    const rows = await env.router.manage('GET', '/api/logs?limit=20');
    const row = (rows.json.logs as any[]).find((l) => l.endpoint === '/v1/images/generations' && l.streamed);
    const textIn = tokenCount('a kite');
    const out = gptImageOutputTokens(undefined, undefined);
    expect(row).toMatchObject({ tokensIn: textIn, tokensOut: out });
    expect(row.costUsd).toBeCloseTo((textIn * 5 + out * 40) / 1e6, 9);
    // Imagen's :predict cannot stream: a 400 naming stream (skipped inside a combo).
    const err = await sdk(env)
      .images.generate({ model: 'gemini/imagen-4.0-generate-001', prompt: 'x', stream: true })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({ code: 'endpoint_not_supported', param: 'stream' });
  });

  it('stream: true to a Gemini image model: streamGenerateContent SSE becomes one image_generation.completed event with usage', async () => {
    const { data: stream, response } = await sdk(env)
      .images.generate({ model: 'gemini/gemini-2.5-flash-image', prompt: 'a kite at dusk', stream: true, partial_images: 2, size: '1024x1536' })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    // Gemini sends the image whole: no partial renderings exist, so only the completed event (OpenAI: the
    // final image may arrive before the partials asked for).
    const textIn = tokenCount('a kite at dusk');
    expect(events).toEqual([
      {
        type: 'image_generation.completed',
        b64_json: PNG_B64,
        created_at: expect.any(Number),
        size: '1024x1536',
        quality: 'auto',
        background: 'auto',
        output_format: 'png',
        usage: { input_tokens: textIn, input_tokens_details: { text_tokens: textIn, image_tokens: 0 }, output_tokens: GEMINI_IMAGE_TOKENS, total_tokens: textIn + GEMINI_IMAGE_TOKENS },
      },
    ]);
    const sent = env.mock.requests.filter((r) => r.endpoint === 'gemini.stream');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/v1beta/models/gemini-2.5-flash-image:streamGenerateContent');
    expect(sent[0]!.query).toMatchObject({ alt: 'sse' });
    expect(sent[0]!.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a kite at dusk' }] }],
      generationConfig: { responseModalities: ['TEXT', 'IMAGE'], imageConfig: { aspectRatio: '2:3' } },
    });
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ endpoint: '/v1/images/generations', provider: 'gemini', status: 200, streamed: true, tokensIn: textIn, tokensOut: GEMINI_IMAGE_TOKENS });
    expect(row.costUsd).toBeCloseTo((textIn * 0.3 + GEMINI_IMAGE_TOKENS * 30) / 1e6, 9);
  });

  it('a combo fails over from a failing OpenAI target to Gemini; both attempts are logged', async () => {
    await combo(env, 'img-fallback', ['openai/gpt-image-1', 'gemini/gemini-2.5-flash-image']);
    env.mock.handle((req) => (req.endpoint === 'openai.images' ? { type: 'status', status: 503 } : undefined));
    const { data, response } = await sdk(env).images.generate({ model: 'img-fallback', prompt: 'a boat' }).withResponse();
    expect(data.data![0]!.b64_json).toBe(PNG_B64);
    const rows = await rowsOf(env, traceOf(response), 2);
    expect(rows.map((r) => [r.provider, r.status]).sort()).toEqual([
      ['gemini', 200],
      ['openai', 503],
    ]);
  });

  it('a combo skips a target whose provider has no image endpoint (Groq) without calling it', async () => {
    await combo(env, 'img-skip', ['groq/llama-3.3-70b-versatile', 'openai/dall-e-2']);
    const reply = await sdk(env).images.generate({ model: 'img-skip', prompt: 'x' });
    expect(reply.data).toHaveLength(1);
    expect(env.mock.requests.map((r) => r.endpoint)).toEqual(['openai.images']);
  });

  it('a key scoped to other models is refused with 403 before any upstream call', async () => {
    const scoped = await env.router.createKey(['proxy', 'model:openai/dall-e-*']);
    const err = await sdk(env, scoped)
      .images.generate({ model: 'openai/gpt-image-1', prompt: 'x' })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAIError());
    expect(err.status).toBe(403);
    expect(env.mock.requests).toHaveLength(0);
    const ok = await sdk(env, scoped).images.generate({ model: 'openai/dall-e-2', prompt: 'x' });
    expect(ok.data).toHaveLength(1);
  });

  it('upstream errors keep OpenAI\'s error object; bad input is a 400 naming the field', async () => {
    env.mock.enqueue({ type: 'status', status: 400, message: 'Invalid size', code: 'invalid_size' });
    const err = await sdk(env)
      .images.generate({ model: 'openai/dall-e-3', prompt: 'x', size: '1x1' as any })
      .catch((e) => e);
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_size');
    const res = await fetch(`${env.router.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/dall-e-3', n: 11, prompt: 'x' }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'n' });
  });
});

describe('the recorded text-to-image tool conversation', () => {
  it('replays chat-text-to-image-tool.yaml through router, then the image the tool asks for is generated', async () => {
    const [rec] = loadRecording('openai/chat-text-to-image-tool.yaml');
    const asked = rec!.request.json as any;
    env.mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'replay', file: 'openai/chat-text-to-image-tool.yaml' } : undefined));
    const client = sdk(env);
    const { data: chat, response } = await client.chat.completions.create({ ...asked, model: `openai/${asked.model}` }).withResponse();
    // The recorded reply: the reasoning model spent its whole budget thinking (finish_reason length).
    expect(chat.choices[0]!.finish_reason).toBe('length');
    expect(chat.usage?.completion_tokens_details?.reasoning_tokens).toBe(150);
    expect(env.mock.requests[0]!.json.tools[0].function.name).toBe('generate_image');
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ endpoint: '/v1/chat/completions', tokensIn: 206, tokensOut: 150, reasoningTokens: 150 });
    // The application then draws what the user asked for, with the tool's low-quality setting.
    const prompt = asked.messages.find((m: any) => m.role === 'user').content;
    const image = await client.images.generate({ model: 'openai/gpt-image-1', prompt, quality: 'low' });
    expect(image.data![0]!.b64_json).toBe(PNG_B64);
    expect(env.mock.requests[1]!.json).toMatchObject({ model: 'gpt-image-1', prompt, quality: 'low' });
  });
});

describe('POST /v1/images/edits (multipart)', () => {
  it('OpenAI: image[] and mask reach the upstream as multipart with the model rewritten', async () => {
    const { data, response } = await sdk(env)
      .images.edit({ model: 'openai/gpt-image-1', image: [await png(), await png()], mask: await png(), prompt: 'add a hat', quality: 'low' })
      .withResponse();
    expect(data.data![0]!.b64_json).toBe(PNG_B64);
    const sent = env.mock.requests.find((r) => r.endpoint === 'openai.image_edits')!;
    expect(sent.form!.fields).toMatchObject({ model: 'gpt-image-1', prompt: 'add a hat', quality: 'low' });
    expect(sent.form!.files.map((f) => [f.field, f.filename, f.mimeType, f.size])).toEqual([
      ['image[]', 'in.png', 'image/png', 68],
      ['image[]', 'in.png', 'image/png', 68],
      ['mask', 'in.png', 'image/png', 68],
    ]);
    expect(sent.headers.authorization).toBe('Bearer sk-openai-media');
    const [row] = await rowsOf(env, traceOf(response));
    const textIn = tokenCount('add a hat');
    const imageIn = 2 * EDIT_IMAGE_TOKENS;
    const out = gptImageOutputTokens('low', undefined);
    expect(row).toMatchObject({ endpoint: '/v1/images/edits', tokensIn: textIn + imageIn, tokensOut: out });
    expect(row.costUsd).toBeCloseTo((textIn * 5 + imageIn * 10 + out * 40) / 1e6, 9);
  });

  it('Gemini: the input image becomes an inlineData part of generateContent', async () => {
    const reply = await sdk(env).images.edit({ model: 'gemini/gemini-2.5-flash-image', image: await png(), prompt: 'make it blue' });
    expect(reply.data![0]!.b64_json).toBe(PNG_B64);
    const sent = env.mock.requests.find((r) => r.endpoint === 'gemini.generate')!;
    expect(sent.json.contents[0].parts).toEqual([{ inlineData: { mimeType: 'image/png', data: PNG_B64 } }, { text: 'make it blue' }]);
  });

  it('Gemini with a mask: image, mask and an instruction naming the editable region reach generateContent', async () => {
    const mask = await toFile(Buffer.from(MASK_B64, 'base64'), 'mask.png', { type: 'image/png' });
    const { data, response } = await sdk(env).images.edit({ model: 'gemini/gemini-2.5-flash-image', image: await png(), mask, prompt: 'put a hat on it' }).withResponse();
    expect(data.data![0]!.b64_json).toBe(PNG_B64);
    const sent = env.mock.requests.find((r) => r.endpoint === 'gemini.generate')!;
    expect(sent.json.contents[0].parts).toEqual([
      { inlineData: { mimeType: 'image/png', data: PNG_B64 } },
      { inlineData: { mimeType: 'image/png', data: MASK_B64 } },
      { text: maskInstruction(1) },
      { text: 'put a hat on it' },
    ]);
    expect(maskInstruction(1)).toMatch(/fully transparent pixels mark the only region you may change/);
    // Both images are billed as input images by the mock (258 tokens each), as Gemini counts them.
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ provider: 'gemini', status: 200, tokensIn: tokenCount(`${maskInstruction(1)} put a hat on it`) + 2 * 258 });
  });

  it('Gemini edit with stream: true and n = 2: two streamed calls, two image_edit.completed events, one row', async () => {
    const { data: stream, response } = await sdk(env)
      .images.edit({ model: 'gemini/gemini-2.5-flash-image', image: await png(), prompt: 'make it blue', stream: true, n: 2 })
      .withResponse();
    const events: any[] = [];
    for await (const ev of stream) events.push(ev);
    expect(events.map((e) => [e.type, e.b64_json])).toEqual([
      ['image_edit.completed', PNG_B64],
      ['image_edit.completed', PNG_B64],
    ]);
    const textIn = tokenCount('make it blue');
    expect(events[0].usage).toMatchObject({ input_tokens: textIn + 258, input_tokens_details: { text_tokens: textIn, image_tokens: 258 }, output_tokens: GEMINI_IMAGE_TOKENS });
    const sent = env.mock.requests.filter((r) => r.endpoint === 'gemini.stream');
    expect(sent).toHaveLength(2);
    expect(sent[0]!.json.contents[0].parts).toEqual([{ inlineData: { mimeType: 'image/png', data: PNG_B64 } }, { text: 'make it blue' }]);
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ endpoint: '/v1/images/edits', provider: 'gemini', streamed: true, tokensIn: 2 * (textIn + 258), tokensOut: 2 * GEMINI_IMAGE_TOKENS });
  });

  it('multipart is refused without a credential header (a cross-site form cannot send one)', async () => {
    const form = new FormData();
    form.set('model', 'openai/gpt-image-1');
    form.set('prompt', 'x');
    const res = await fetch(`${env.router.url}/v1/images/edits`, { method: 'POST', body: form });
    expect(res.status).toBe(415);
    expect(env.mock.requests).toHaveLength(0);
  });

  it('a missing image is a 400 naming it; a body past the client limit is a 413', async () => {
    const form = new FormData();
    form.set('model', 'openai/gpt-image-1');
    form.set('prompt', 'x');
    const res = await fetch(`${env.router.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${env.key}` }, body: form });
    expect(res.status).toBe(400);
    expect((await res.json()).error.param).toBe('image');
    const big = new FormData();
    big.set('model', 'openai/gpt-image-1');
    big.set('image', new Blob([new Uint8Array(32 * 1024 * 1024 + 1)], { type: 'image/png' }), 'big.png');
    const tooBig = await fetch(`${env.router.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${env.key}` }, body: big });
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).error).toMatchObject({ type: 'request_too_large', code: 'payload_too_large' });
  });
});

function OpenAIError() {
  // The SDK's error class, from the same module instance the client uses.
  return (sdk(env).constructor as unknown as { APIError: new (...a: any[]) => Error }).APIError;
}

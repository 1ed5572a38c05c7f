/**
 * The mock's OpenAI media endpoints and Gemini image output, driven directly by the official SDKs: what it
 * sends is what those clients accept (multipart uploads parsed, binary and SSE audio, transcript events,
 * OpenAI-shaped errors).
 */
import { GoogleGenAI, Modality } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PNG_B64 } from './formats/media.js';
import { startMockUpstream, type MockUpstream } from './upstream.js';

let mock: MockUpstream;
let client: OpenAI;

beforeAll(async () => {
  mock = await startMockUpstream();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: mock.openaiBase, maxRetries: 0 });
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

describe('mock media endpoints', () => {
  it('images: generations (usage for gpt-image-1) and multipart edits', async () => {
    const gen = await client.images.generate({ model: 'gpt-image-1', prompt: 'a fox', n: 2 });
    expect(gen.data).toHaveLength(2);
    expect(gen.usage?.output_tokens).toBe(2 * 1056);
    const edit = await client.images.edit({ model: 'gpt-image-1', image: await toFile(Buffer.from(PNG_B64, 'base64'), 'a.png', { type: 'image/png' }), prompt: 'hat' });
    expect(edit.data![0]!.b64_json).toBe(PNG_B64);
    expect(mock.requests[1]!.form!.files[0]).toMatchObject({ field: 'image', filename: 'a.png', mimeType: 'image/png' });
  });

  it('audio: speech bytes, transcription formats and stream events, translations', async () => {
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' });
    expect((await speech.arrayBuffer()).byteLength).toBe(4 * 16 * 1024);
    const file = await toFile(Buffer.alloc(32_000), 'a.wav', { type: 'audio/wav' });
    expect((await client.audio.transcriptions.create({ model: 'whisper-1', file })).text).toBe('Hello from the mock.');
    const verbose = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(32_000), 'a.wav'), response_format: 'verbose_json', timestamp_granularities: ['word'] });
    expect(verbose.duration).toBe(2);
    expect(verbose.words).toHaveLength(4);
    const events: string[] = [];
    for await (const ev of await client.audio.transcriptions.create({ model: 'gpt-4o-mini-transcribe', file: await toFile(Buffer.alloc(10), 'a.wav'), stream: true })) events.push(ev.type);
    expect(events.at(-1)).toBe('transcript.text.done');
    expect((await client.audio.translations.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(10), 'a.wav') })).text).toBe('Hello from the mock.');
  });

  it('errors in OpenAI\'s shape: a missing file, streaming whisper-1, a scripted status', async () => {
    const stream = await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.alloc(10), 'a.wav'), stream: true }).catch((e) => e);
    expect(stream.status).toBe(400);
    expect(stream.error).toMatchObject({ type: 'invalid_request_error', param: 'stream' });
    mock.enqueue({ type: 'status', status: 429 });
    const limited = await client.moderations.create({ input: 'x' }).catch((e) => e);
    expect(limited.status).toBe(429);
  });

  it('moderations flag violent text; Gemini image output and Imagen :predict', async () => {
    const mod = await client.moderations.create({ model: 'omni-moderation-latest', input: ['fine', 'kill it'] });
    expect(mod.results.map((r) => r.flagged)).toEqual([false, true]);
    const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: mock.url } });
    const r = await ai.models.generateContent({ model: 'gemini-2.5-flash-image', contents: 'a cat', config: { responseModalities: [Modality.TEXT, Modality.IMAGE] } });
    expect(r.candidates![0]!.content!.parts!.find((p) => p.inlineData)!.inlineData!.data).toBe(PNG_B64);
    // Streamed image output, read by the official SDK: the text chunk, then the image whole with the usage.
    const chunks: any[] = [];
    for await (const c of await ai.models.generateContentStream({ model: 'gemini-2.5-flash-image', contents: 'a cat', config: { responseModalities: [Modality.TEXT, Modality.IMAGE] } })) chunks.push(c);
    expect(chunks.map((c) => Object.keys(c.candidates[0].content.parts[0]))).toEqual([['text'], ['inlineData']]);
    expect(chunks[1].candidates[0]).toMatchObject({ finishReason: 'STOP', content: { parts: [{ inlineData: { mimeType: 'image/png', data: PNG_B64 } }] } });
    expect(chunks[1].usageMetadata.candidatesTokenCount).toBe(1290);
    expect(mock.requests.at(-1)).toMatchObject({ endpoint: 'gemini.stream', query: { alt: 'sse' } });
    // Imagen on the Gemini API is REST only here (this @google/genai version sends generateImages to Vertex only).
    const res = await fetch(`${mock.geminiBase}/models/imagen-4.0-generate-001:predict`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ instances: [{ prompt: 'a cat' }], parameters: { sampleCount: 2 } }),
    });
    expect((await res.json()).predictions).toEqual([
      { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' },
      { bytesBase64Encoded: PNG_B64, mimeType: 'image/png' },
    ]);
  });
});

/**
 * Each client gets errors in its own format's shape on the routes of that format, including translated ones
 * (issue 27 item 8): the official Anthropic and Google SDKs against the real daemon, with an OpenAI-format
 * upstream that refuses, and router's own refusals (unknown model, bad key). The OpenAI routes keep the
 * standard body, which is OpenAI's shape.
 */
import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, script, setup, type Env } from '../resilience/helpers.js';

let env: Env;

beforeAll(async () => {
  env = await setup({ providers: ['openai'] });
  script(env.mock, {
    refused: { type: 'status', status: 400, message: 'This model does not support that parameter.', errorType: 'invalid_request_error', code: 'unsupported_parameter' },
  });
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

const anthropic = (apiKey = env.key) => new Anthropic({ apiKey, baseURL: env.router.url, maxRetries: 0 });
const gemini = (apiKey = env.key) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl: env.router.url } });

async function anthropicError(run: () => Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Anthropic.APIError);
  return err as InstanceType<typeof Anthropic.APIError>;
}

async function geminiError(run: () => Promise<unknown>): Promise<{ status: number; body: any }> {
  const err = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return { status: (err as ApiError).status, body: JSON.parse((err as ApiError).message) };
}

describe('Anthropic clients (/v1/messages, /v1/messages/count_tokens)', () => {
  const ask = (model: string) => () => anthropic().messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

  it("an OpenAI upstream's refusal on the translated route reads as Anthropic's error", async () => {
    const err = await anthropicError(ask('openai/refused'));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('does not support that parameter') } });
    expect((err.error as any).error.code).toEqual(expect.any(String));
  });

  it("router's own refusals too: unknown model (404), bad key (401), bad body (400), and on count_tokens", async () => {
    const unknown = await anthropicError(ask('nosuch/model'));
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(unknown.error).toMatchObject({ type: 'error', error: { type: 'not_found_error', code: 'model_not_found', message: expect.stringContaining('nosuch/model') } });
    const badKey = await anthropicError(() => anthropic('sk-not-a-router-key').messages.create({ model: 'openai/x', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }));
    expect(badKey).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(badKey.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const raw = await fetch(`${env.router.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': env.key, 'content-type': 'application/json' }, body: '{"model": 5}' });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } });
    const count = await anthropicError(() => anthropic().messages.countTokens({ model: 'nosuch/model', messages: [{ role: 'user', content: 'hi' }] }));
    expect(count.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

describe('Gemini clients (/v1beta/models/...:generateContent)', () => {
  it("an OpenAI upstream's refusal reads as Google's error: {error: {code, message, status, details}}", async () => {
    const { status, body } = await geminiError(() => gemini().models.generateContent({ model: 'openai/refused', contents: 'hi' }));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('does not support that parameter') });
    expect(body.error.details[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', domain: 'router', reason: expect.any(String) });
  });

  it("router's own refusals too, streamed calls included: unknown model, bad key", async () => {
    const unknown = await geminiError(() => gemini().models.generateContent({ model: 'nosuch/model', contents: 'hi' }));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND', details: [{ reason: 'model_not_found' }] });
    const stream = await geminiError(() => gemini().models.generateContentStream({ model: 'nosuch/model', contents: 'hi' }));
    expect(stream.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    const badKey = await geminiError(() => gemini('not-a-router-key').models.generateContent({ model: 'openai/x', contents: 'hi' }));
    expect(badKey.status).toBe(401);
    expect(badKey.body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
  });
});

describe('OpenAI clients', () => {
  it('keep the standard body, which is OpenAI\'s shape', async () => {
    const r = await chat(env, 'nosuch/model');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: { message: expect.any(String), type: 'not_found_error', code: 'model_not_found' } });
  });
});

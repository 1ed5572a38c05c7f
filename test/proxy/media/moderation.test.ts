/**
 * Moderation through router (issue 17 item 3), a real daemon and the official `openai` SDK unmodified:
 * text and image inputs to OpenAI and an OpenAI-compatible node, the default model, failover in a combo,
 * a key's model scope, a usage row (free: cost 0), and bad input.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyEnv } from '../../support/proxy-env.js';
import { combo, rowsOf, sdk, startMediaEnv, traceOf } from './helpers.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startMediaEnv();
});
afterEach(() => env.mock.reset());
afterAll(async () => {
  await env?.stop();
});

describe('POST /v1/moderations', () => {
  it('text inputs to OpenAI: one result per input, the upstream reply as written; a row that costs nothing', async () => {
    const { data, response } = await sdk(env).moderations.create({ model: 'openai/omni-moderation-latest', input: ['a nice day', 'I will kill the process'] }).withResponse();
    expect(data.results.map((r) => r.flagged)).toEqual([false, true]);
    expect(data.results[1]!.categories.violence).toBe(true);
    expect(env.mock.requests[0]!.json).toEqual({ model: 'omni-moderation-latest', input: ['a nice day', 'I will kill the process'] });
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ endpoint: '/v1/moderations', provider: 'openai', model: 'omni-moderation-latest', status: 200, costUsd: 0 });
    expect(JSON.parse(row.notes)).toMatchObject({ flagged: true, inputs: 2 });
  });

  it('image and text parts; no model means openai/omni-moderation-latest', async () => {
    const reply = await sdk(env).moderations.create({
      input: [
        { type: 'text', text: 'describe this' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    } as any);
    expect(reply.results[0]!.category_applied_input_types.violence).toEqual(['text', 'image']);
    expect(env.mock.requests[0]!.json.model).toBe('omni-moderation-latest');
  });

  it('an OpenAI-compatible node; a combo fails over from a 500 to it', async () => {
    const direct = await sdk(env).moderations.create({ model: 'node/text-moderation-stable', input: 'hello' });
    expect(direct.results).toHaveLength(1);
    await combo(env, 'mod', ['openai/omni-moderation-latest', 'node/omni-moderation-latest']);
    env.mock.enqueue({ type: 'status', status: 500 });
    const { response } = await sdk(env).moderations.create({ model: 'mod', input: 'hello' }).withResponse();
    const rows = await rowsOf(env, traceOf(response), 2);
    expect(rows.map((r) => [r.provider, r.status]).sort()).toEqual([
      ['node', 200],
      ['openai', 500],
    ]);
  });

  it('a model-scoped key is refused; bad input is a 400 naming input', async () => {
    const scoped = await env.router.createKey(['proxy', 'model:node/*']);
    const err = await sdk(env, scoped)
      .moderations.create({ input: 'x' })
      .catch((e) => e);
    expect(err.status).toBe(403);
    const bad = await sdk(env)
      .moderations.create({ model: 'openai/omni-moderation-latest', input: [{ type: 'audio' }] as any })
      .catch((e) => e);
    expect(bad.status).toBe(400);
    expect(bad.error.param).toBe('input');
    expect(env.mock.requests).toHaveLength(0);
  });
});

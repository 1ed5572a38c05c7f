// Mock upstream: a minimal node:http server with canned OpenAI Chat Completions and Anthropic Messages
// replies, JSON and SSE. Run as its own process; reports {type:'ready', port} over IPC.
//
// Behaviour comes from the process config (argv[2], JSON) and can be varied per request through the model
// name, since a proxy forwards the model but not arbitrary headers:
//   <anything>-c<N>   N content chunks in a stream (default cfg.chunks, 50)
//   <anything>-d<MS>  delay between chunks in ms (default cfg.chunkDelayMs, 0 = next event-loop turn)
//   <anything>-l<MS>  latency before the reply head (default cfg.latencyMs, 0)
// A model listed in cfg.failModels answers 503 (an overloaded upstream), so combos fail over.
import http from 'node:http';

const cfg = { chunks: 50, chunkDelayMs: 0, latencyMs: 0, failModels: [], port: 0, ...JSON.parse(process.argv[2] ?? '{}') };
const failModels = new Set(cfg.failModels);
const CREATED = 1_700_000_000;

function behaviour(model) {
  const m = String(model ?? 'gpt-bench');
  const bare = m.includes('/') ? m.slice(m.lastIndexOf('/') + 1) : m;
  const num = (re, dflt) => {
    const x = re.exec(bare);
    return x ? Number(x[1]) : dflt;
  };
  return {
    model: bare,
    chunks: num(/-c(\d+)/, cfg.chunks),
    delay: num(/-d(\d+)/, cfg.chunkDelayMs),
    latency: num(/-l(\d+)/, cfg.latencyMs),
    fail: failModels.has(bare),
  };
}

const cache = new Map();
function canned(kind, b) {
  const key = `${kind}|${b.model}|${b.chunks}`;
  let c = cache.get(key);
  if (c) return c;
  if (kind === 'openai-json') {
    c = Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-bench',
        object: 'chat.completion',
        created: CREATED,
        model: b.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! This is a canned benchmark reply.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
      }),
    );
  } else if (kind === 'anthropic-json') {
    c = Buffer.from(
      JSON.stringify({
        id: 'msg_bench',
        type: 'message',
        role: 'assistant',
        model: b.model,
        content: [{ type: 'text', text: 'Hello! This is a canned benchmark reply.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 9 },
      }),
    );
  } else if (kind === 'openai-sse') {
    const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: CREATED, model: b.model };
    const ev = (o) => Buffer.from(`data: ${JSON.stringify({ ...base, ...o })}\n\n`);
    const events = [ev({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })];
    for (let i = 0; i < b.chunks; i++) events.push(ev({ choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] }));
    events.push(ev({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
    events.push(ev({ choices: [], usage: { prompt_tokens: 12, completion_tokens: b.chunks, total_tokens: 12 + b.chunks } }));
    events.push(Buffer.from('data: [DONE]\n\n'));
    c = events;
  } else {
    const ev = (type, o) => Buffer.from(`event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`);
    const events = [
      ev('message_start', {
        message: { id: 'msg_bench', type: 'message', role: 'assistant', model: b.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
      }),
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ];
    for (let i = 0; i < b.chunks; i++) events.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `tok${i} ` } }));
    events.push(ev('content_block_stop', { index: 0 }));
    events.push(ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: b.chunks } }));
    events.push(ev('message_stop', {}));
    c = events;
  }
  cache.set(key, c);
  return c;
}

/** Requests seen per model (the harness reads them to confirm failover happened). */
const counts = new Map();

const FAIL_BODY = Buffer.from(JSON.stringify({ error: { message: 'The upstream is overloaded (benchmark failure).', type: 'server_error', code: 'overloaded' } }));

function sendJson(res, status, buf) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': buf.length });
  res.end(buf);
}

function sendStream(res, events, delay) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let i = 0;
  let timer;
  const next = () => {
    if (res.destroyed) return;
    res.write(events[i++]);
    if (i >= events.length) return res.end();
    timer = delay > 0 ? setTimeout(next, delay) : setImmediate(next);
  };
  res.on('close', () => {
    clearTimeout(timer);
    clearImmediate(timer);
  });
  next();
}

function handle(req, res, raw) {
  const path = req.url.split('?')[0];
  const openai = path.endsWith('/chat/completions');
  const anthropic = path.endsWith('/messages');
  if (req.method !== 'POST' || (!openai && !anthropic)) return sendJson(res, 404, Buffer.from('{"error":{"message":"not found"}}'));
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return sendJson(res, 400, Buffer.from('{"error":{"message":"bad json"}}'));
  }
  const b = behaviour(body.model);
  counts.set(b.model, (counts.get(b.model) ?? 0) + 1);
  const reply = () => {
    if (b.fail) return sendJson(res, 503, FAIL_BODY);
    if (body.stream === true) return sendStream(res, canned(openai ? 'openai-sse' : 'anthropic-sse', b), b.delay);
    return sendJson(res, 200, canned(openai ? 'openai-json' : 'anthropic-json', b));
  };
  if (b.latency > 0) setTimeout(reply, b.latency);
  else reply();
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString()));
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
server.requestTimeout = 0;
server.listen(cfg.port, '127.0.0.1', () => process.send?.({ type: 'ready', port: server.address().port }));
process.on('message', (msg) => {
  if (msg?.bench === 'counts') {
    process.send?.({ benchReply: msg.id, counts: Object.fromEntries(counts) });
    if (msg.reset) counts.clear();
  }
});
process.on('disconnect', () => process.exit(0));

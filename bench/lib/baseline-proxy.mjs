// The bare pass-through baseline: node:http in, node:http with a keep-alive agent out, bytes piped both ways,
// nothing parsed. This is the ceiling for any Node proxy on this machine. Run as its own process;
// argv[2] is the upstream port; reports {type:'ready', port} over IPC.
import http from 'node:http';

const upstreamPort = Number(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048, keepAliveMsecs: 30_000 });

const server = http.createServer((req, res) => {
  const up = http.request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent }, (ur) => {
    res.writeHead(ur.statusCode, ur.headers);
    ur.pipe(res);
  });
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.pipe(up);
});
server.keepAliveTimeout = 120_000;
server.headersTimeout = 130_000;
server.requestTimeout = 0;
server.listen(0, '127.0.0.1', () => process.send?.({ type: 'ready', port: server.address().port }));
process.on('disconnect', () => process.exit(0));

import pg from 'pg'; import http from 'node:http'; import autocannon from 'autocannon';
const pool = new pg.Pool({ connectionString: process.argv[2], max: 4 });
const S = '"app_WECDYd95VRgWQ9sWUWcv0Mrrh3zrVKlE"."cls_Item"';
const text = `SELECT "objectId","createdAt","updatedAt",data,acl FROM ${S} WHERE "_s:category" = $1 AND "_publicRead" ORDER BY "objectId" LIMIT 100`;
const server = http.createServer(async (req, res) => {
  const r = await pool.query({ name: 'eq', text, values: ['c7'] });
  const results = r.rows.map((x) => ({ objectId: x.objectId, createdAt: x.createdAt, updatedAt: x.updatedAt, ...x.data }));
  const body = JSON.stringify({ results });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body);
}).listen(0, '127.0.0.1');
await new Promise((r) => server.on('listening', r));
for (let i = 0; i < 3; i++) { const r = await autocannon({ url: 'http://127.0.0.1:' + server.address().port + '/', connections: 1, duration: 3 }); console.log('bare+pg eq', r.requests.average); }
server.close(); await pool.end();

import pg from 'pg';
const pool = new pg.Pool({ connectionString: process.argv[2], max: 1 });
const S = '"app_WECDYd95VRgWQ9sWUWcv0Mrrh3zrVKlE"."cls_Item"';
const W = `FROM ${S} WHERE "_s:category" = $1 AND "_publicRead" ORDER BY "objectId" LIMIT 100`;
const row1 = `'{"objectId":' || to_json("objectId")::text || ',"createdAt":"' || "createdAt" || '","updatedAt":"' || "updatedAt" || '",' || substr(data::text, 2)`;
const variants = {
  full: `SELECT "objectId","createdAt","updatedAt",data,acl ${W}`,
  ids: `SELECT "objectId" ${W}`,
  text: `SELECT "objectId","createdAt","updatedAt",data::text,acl::text ${W}`,
  one: `SELECT ${row1} AS j ${W}`,
  agg: `SELECT string_agg(j, ',') AS j FROM (SELECT ${row1} AS j ${W}) t`,
};
for (const round of [1, 2, 3]) for (const [name, text] of Object.entries(variants)) {
  const N = 3000; const t0 = performance.now();
  for (let i = 0; i < N; i++) await pool.query({ name, text, values: ['c7'] });
  if (round > 1) console.log(round, name, ((performance.now() - t0) / N).toFixed(3), 'ms');
}
await pool.end();

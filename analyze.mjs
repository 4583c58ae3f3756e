// usage: node analyze.mjs file.cpuprofile [N]  — self and inclusive time by function
import fs from 'node:fs';
const p = JSON.parse(fs.readFileSync(process.argv[2]));
const N = Number(process.argv[3] ?? 40);
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
const dt = p.timeDeltas; let total = 0;
p.samples.forEach((id, i) => { self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; });
const key = (n) => `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*\/(node_modules\/[^/]+|src|dist)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
const selfBy = new Map(), incl = new Map();
for (const [id, t] of self) {
  const n = byId.get(id); selfBy.set(key(n), (selfBy.get(key(n)) ?? 0) + t);
  const seen = new Set(); let cur = id;
  while (cur !== undefined) { const k = key(byId.get(cur)); if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + t); } cur = parent.get(cur); }
}
const show = (m, title) => { console.log(`## ${title} (total ${(total/1000).toFixed(0)} ms)`); [...m].sort((a,b)=>b[1]-a[1]).slice(0,N).forEach(([k,t])=>console.log(`${(100*t/total).toFixed(1).padStart(5)}%  ${k}`)); };
show(selfBy, 'self'); show(incl, 'inclusive');

// `helm test`: asks the gateway Service (TOLLGATE_URL) whether it is ready and for /api/status, with the
// gateway image's own Node (the image has no curl). Exits 1 with the reason when either answer is wrong.
const base = process.env.TOLLGATE_URL;

async function expectJson(path, accept) {
  const response = await fetch(new URL(path, base), { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${path}: HTTP ${response.status}: ${text.slice(0, 200)}`);
  const body = JSON.parse(text);
  if (!accept(body)) throw new Error(`GET ${path}: unexpected answer ${text.slice(0, 200)}`);
  console.log(`GET ${path}: ok`);
}

try {
  await expectJson('/readyz', (body) => body.status === 'ok');
  await expectJson('/api/status', (body) => body.success === true);
} catch (error) {
  console.error(`tollgate helm test failed against ${base}: ${error.message}`);
  process.exit(1);
}

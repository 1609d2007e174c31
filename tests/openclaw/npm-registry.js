// A package registry on loopback that serves one package, as npm's registry answers: the packument
// at `/<name>` and the archive it names, with its sha1 and sha512. No uplink: any other name is a
// 404, so an install by name can only get this package.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';

/** Serves the package archive at `tgzPath` (its package.json inside names it); `requests` logs every request. */
export async function startRegistry(tgzPath, manifest) {
  const bytes = fs.readFileSync(tgzPath);
  const requests = [];
  const file = `${manifest.name}-${manifest.version}.tgz`;
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const base = `http://127.0.0.1:${server.address().port}`;
    if (req.method === 'GET' && decodeURIComponent(req.url) === `/${manifest.name}`) {
      const version = {
        ...manifest,
        _id: `${manifest.name}@${manifest.version}`,
        dist: {
          tarball: `${base}/${manifest.name}/-/${file}`,
          shasum: crypto.createHash('sha1').update(bytes).digest('hex'),
          integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
        },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: manifest.name, 'dist-tags': { latest: manifest.version }, versions: { [manifest.version]: version } }));
      return;
    }
    if (req.method === 'GET' && req.url === `/${manifest.name}/-/${file}`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length });
      res.end(bytes);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, requests, stop: () => server.close() };
}

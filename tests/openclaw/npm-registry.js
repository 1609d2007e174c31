// A package registry on loopback that serves one package, as npm's registry answers: the packument
// at `/<name>` and the archives it names, with their sha1 and sha512. No uplink: any other name is a
// 404, so an install by name can only get this package. `publish` adds a release and makes it
// `latest`, as a maintainer's `npm publish` does.

import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';

/** The package.json inside a package archive. */
export function manifestOf(tgzPath) {
  return JSON.parse(execFileSync('tar', ['-xzOf', tgzPath, 'package/package.json'], { encoding: 'utf8' }));
}

/** Serves the package archive at `tgzPath` (`manifest`: its package.json); `requests` logs every request. */
export async function startRegistry(tgzPath, manifest = manifestOf(tgzPath)) {
  const name = manifest.name;
  const releases = new Map();
  let latest;
  const publish = (path, release = manifestOf(path)) => {
    if (release.name !== name) throw new Error(`the registry serves ${name}, not ${release.name}`);
    releases.set(release.version, { manifest: release, bytes: fs.readFileSync(path) });
    latest = release.version;
  };
  publish(tgzPath, manifest);
  const requests = [];
  const file = (version) => `${name}-${version}.tgz`;
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const base = `http://127.0.0.1:${server.address().port}`;
    if (req.method === 'GET' && decodeURIComponent(req.url) === `/${name}`) {
      const versions = Object.fromEntries([...releases].map(([version, { manifest: release, bytes }]) => [version, {
        ...release,
        _id: `${name}@${version}`,
        dist: {
          tarball: `${base}/${name}/-/${file(version)}`,
          shasum: crypto.createHash('sha1').update(bytes).digest('hex'),
          integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
        },
      }]));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name, 'dist-tags': { latest }, versions }));
      return;
    }
    const release = [...releases].find(([version]) => req.method === 'GET' && req.url === `/${name}/-/${file(version)}`)?.[1];
    if (release) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': release.bytes.length });
      res.end(release.bytes);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not found"}');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, requests, publish, stop: () => server.close() };
}

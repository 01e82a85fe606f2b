/**
 * docker/compose.scale-out.yml, checked without a Docker engine (our machines have none): its
 * topology read from the YAML — Valkey with its append-only file, two publisher instances on one
 * shared log and one base URL, nginx in front of both — and nginx's configuration rendered as the
 * official nginx image renders it at start, then checked by Debian's `nginx -t`.
 * packages/publisher/test/integration/scale-out-topology.test.ts runs the same topology.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const repositoryRoot = fileURLToPath(new URL('../../../../', import.meta.url));

interface Service {
  readonly image?: string;
  readonly build?: { readonly context?: string; readonly dockerfile?: string };
  readonly command?: readonly string[];
  readonly environment?: Record<string, string>;
  readonly depends_on?: Record<string, { readonly condition?: string }>;
  readonly volumes?: readonly string[];
  readonly ports?: readonly string[];
  readonly healthcheck?: { readonly test?: readonly string[] };
}
interface Compose {
  readonly name?: string;
  readonly services: Record<string, Service>;
  readonly volumes?: Record<string, unknown>;
}

/** The file as Compose reads it: YAML 1.1 merge keys (`<<: *publisher`) applied. */
const compose = parseYaml(readFileSync(join(repositoryRoot, 'docker/compose.scale-out.yml'), 'utf8'), { merge: true }) as Compose;
const services = Object.entries(compose.services);
const publishers = services.filter(([, service]) => service.build?.dockerfile === 'docker/Dockerfile');
const [valkeyName, valkey] = services.find(([, service]) => service.image?.startsWith('valkey/valkey:') === true) ?? [];
const [, nginx] = services.find(([, service]) => service.image?.startsWith('nginx:') === true) ?? [];

/** The port the publisher's image listens on (`ENV RDF_STREAM_PORT=…` in docker/Dockerfile). */
const imagePort = /RDF_STREAM_PORT=(\d+)/.exec(readFileSync(join(repositoryRoot, 'docker/Dockerfile'), 'utf8'))?.[1];

/**
 * The environment of the nginx:1.27 image (its Dockerfile's `ENV` lines, and what Docker sets in
 * every container) under the service's own: the image's envsubst step substitutes the names of
 * every variable of the container's environment, not only the service's.
 */
const nginxImageEnvironment = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOSTNAME: 'nginx',
  HOME: '/root',
  NGINX_VERSION: '1.27.4',
  NJS_VERSION: '0.8.9',
  NJS_RELEASE: '1~bookworm',
  PKG_RELEASE: '1~bookworm',
  DYNPKG_RELEASE: '1~bookworm',
};

/**
 * The image's /docker-entrypoint.d/20-envsubst-on-templates.sh, for one template: the list of
 * every environment variable's name (awk's ENVIRON, no NGINX_ENVSUBST_FILTER), then envsubst
 * with that list, run by sh in an environment holding only `environment`.
 */
function renderAsTheNginxImage(template: string, environment: Record<string, string>): string {
  const script = `filter="\${NGINX_ENVSUBST_FILTER:-}"
defined_envs=$(printf '\${%s} ' $(awk "END { for (name in ENVIRON) { print ( name ~ /\${filter}/ ) ? name : \\"\\" } }" < /dev/null ))
envsubst "$defined_envs" < "$1"`;
  return execFileSync('sh', ['-c', script, 'sh', template], { env: environment, encoding: 'utf8' });
}

/** Fails with what to install, rather than with spawn's ENOENT. */
function requireCommand(command: string, debianPackage: string): void {
  try {
    execFileSync('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(`${command} is not installed: apt-get install -y ${debianPackage} (scripts/test-prerequisites.sh installs it)`, { cause: error });
  }
}

describe('docker/compose.scale-out.yml', () => {
  it('Valkey 8 keeps the log in an append-only file, flushed every second, in a named volume, with a health check', () => {
    expect(valkey?.image).toBe('valkey/valkey:8');
    const command = (valkey?.command ?? []).join(' ');
    expect(command).toMatch(/^valkey-server /);
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--appendfsync everysec');
    const [volume, target] = (valkey?.volumes ?? [])[0]?.split(':') ?? [];
    // The image's working directory, where its append-only file goes.
    expect(target).toBe('/data');
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    expect((valkey?.healthcheck?.test ?? []).join(' ')).toContain('valkey-cli ping');
  });

  it('two publisher instances from the project image, on the Redis log at the Valkey service, with one base URL', () => {
    expect(publishers.map(([name]) => name)).toHaveLength(2);
    for (const [name, publisher] of publishers) {
      expect(publisher.environment?.RDF_STREAM_LOG, name).toBe('redis');
      const redisUrl = new URL(publisher.environment?.RDF_STREAM_REDIS_URL ?? '');
      expect(`${redisUrl.protocol}//${redisUrl.hostname}:${redisUrl.port}`, name).toBe(`redis://${valkeyName}:6379`);
      expect(publisher.depends_on?.[valkeyName!]?.condition, name).toBe('service_healthy');
      expect(publisher.build?.context, name).toBe('..');
    }
    const [first, second] = publishers.map(([, publisher]) => publisher.environment ?? {});
    expect(first?.RDF_STREAM_REDIS_URL).toBe(second?.RDF_STREAM_REDIS_URL);
    expect(first?.RDF_STREAM_BASE_URL).toBe(second?.RDF_STREAM_BASE_URL);
  });

  it("the base URL is nginx's address: what clients use, not an instance's", () => {
    const baseUrl = publishers[0]?.[1].environment?.RDF_STREAM_BASE_URL ?? '';
    // `${RDF_STREAM_BASE_URL:-default}`: Compose's interpolation with its default.
    const defaultBaseUrl = /^\$\{RDF_STREAM_BASE_URL:-(.+)\}$/.exec(baseUrl)?.[1] ?? baseUrl;
    const published = (nginx?.ports ?? []).map((mapping) => mapping.split(':')[0]);
    expect(published).toContain(new URL(defaultBaseUrl).port);
    // No instance is published on the host: every request goes through nginx.
    for (const [name, publisher] of publishers) expect(publisher.ports, name).toBeUndefined();
  });

  it("nginx waits for both instances and names each once in its upstream, on the image's port", () => {
    for (const [name] of publishers) expect(nginx?.depends_on?.[name]?.condition, name).toBe('service_healthy');
    const servers = [...(nginx?.environment?.PUBLISHER_SERVERS ?? '').matchAll(/server\s+([^\s;]+);/g)].map((match) => match[1]);
    expect(servers.sort()).toEqual(publishers.map(([name]) => `${name}:${imagePort}`).sort());
    // The template goes where the image's entry point renders it from, into nginx's own nginx.conf.
    expect(nginx?.volumes).toContain('./nginx/nginx.conf.template:/etc/nginx/templates/nginx.conf.template:ro');
    expect(posix.join(nginx?.environment?.NGINX_ENVSUBST_OUTPUT_DIR ?? '', 'nginx.conf')).toBe('/etc/nginx/nginx.conf');
  });

  describe("nginx's configuration, rendered as the nginx image does at start", () => {
    let scratch: string;
    beforeAll(() => {
      requireCommand('envsubst', 'gettext-base');
      scratch = mkdtempSync(join(tmpdir(), 'rdf-stream-scale-out-'));
    });
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    /** The compose values, with what must exist on this machine mapped to it: the instances to 127.0.0.1 (nginx resolves upstream names while it reads the file), paths to a scratch folder. */
    const render = () => {
      let servers = nginx?.environment?.PUBLISHER_SERVERS ?? '';
      publishers.forEach(([name], index) => (servers = servers.replace(`server ${name}:${imagePort};`, `server 127.0.0.1:${18_080 + index};`)));
      return renderAsTheNginxImage(join(repositoryRoot, 'docker/nginx/nginx.conf.template'), {
        ...nginxImageEnvironment,
        ...nginx?.environment,
        PUBLISHER_SERVERS: servers,
        NGINX_CACHE_DIR: join(scratch, 'nginx'),
        NGINX_PID_FILE: join(scratch, 'nginx.pid'),
        // A child's standard error is a socket here, which nginx cannot open by name.
        NGINX_ERROR_LOG: join(scratch, 'nginx-error.log'),
      });
    };

    it('one upstream of both instances; nginx variables survive the substitution', () => {
      const conf = render();
      expect(/upstream publisher \{\s*([^\n]*)\n/.exec(conf)?.[1]).toBe('server 127.0.0.1:18080; server 127.0.0.1:18081;');
      // Every variable of the template is set by the compose file (comments name them, unreplaced).
      const directives = conf.split('\n').filter((line) => !line.trimStart().startsWith('#'));
      expect(directives.filter((line) => /\$\{?[A-Z]/.test(line))).toEqual([]);
      expect(conf).toContain('proxy_set_header Host $http_host;');
      expect(conf).toContain('proxy_cache_key "$request_method|$request_uri|$http_accept|$rdf_stream_encoding";');
    });

    it('a dead instance is skipped; SSE is unbuffered and WebSockets upgraded; /latest is cached', () => {
      const conf = render();
      expect(conf).toMatch(/^\s*proxy_next_upstream error timeout;$/m);
      expect(conf).not.toContain('non_idempotent');
      const location = (pattern: string) => conf.slice(conf.indexOf(`location ~ ${pattern}`)).split(/\n {8}\}/)[0] ?? '';
      expect(location('^/streams/[^/]+/(?:events|patches)$')).toContain('proxy_buffering off;');
      expect(location('^/(?:streams/[^/]+/ws|')).toContain('proxy_set_header Upgrade $http_upgrade;');
      expect(location('^/streams/[^/]+/latest$')).toContain('add_header X-Cache-Status $upstream_cache_status always;');
      expect(conf).toMatch(/^\s*proxy_cache rdf_stream;$/m);
    });

    it('nginx -t accepts it', () => {
      requireCommand('nginx', 'nginx');
      mkdirSync(join(scratch, 'nginx'), { recursive: true });
      writeFileSync(join(scratch, 'nginx.conf'), render());
      execFileSync('nginx', ['-t', '-q', '-p', scratch, '-c', join(scratch, 'nginx.conf'), '-e', join(scratch, 'nginx-error.log')], { stdio: 'pipe' });
    });
  });
});

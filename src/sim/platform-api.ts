import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkSshPublicKey } from '../cloud/rules.js';
import { safeEqual } from './bearer-auth.js';
import { SIM_CONFIGURATIONS, SIM_INSTANCE_TYPES, type SimInstanceType } from './catalog.js';
import { BodyTooLarge, readBodyIf, sendJson, sendMessage } from './http-io.js';
import { createdName } from './infra-api.js';
import type { Fields } from './read-fields.js';
import { SimError, SimErrorKind } from './sim-error.js';
import type { SimRuntime } from './sim-runtime.js';

// The platform API (/platform), after the legacy "Fluidstack API Service" document: `api-key` header,
// account SSH keys, GPU configurations with prices, and instances created by gpu_type. Errors follow
// FastAPI: 422 `{ detail: [{ loc, msg, type }] }`, 401 `{ message }`.

/** Operation names for faults and create counts (the platform has no route table of its own). */
export const PLATFORM_OPERATIONS = [
  'listSshKeys',
  'createSshKey',
  'deleteSshKey',
  'listConfigurations',
  'createInstanceByGpuType',
] as const;
export type PlatformOperation = (typeof PLATFORM_OPERATIONS)[number];

interface PlatformRoute {
  readonly operation: PlatformOperation;
  readonly method: string;
  readonly pattern: RegExp;
}

const ROUTES: readonly PlatformRoute[] = [
  { operation: 'listSshKeys', method: 'GET', pattern: /^\/ssh_keys\/?$/ },
  { operation: 'createSshKey', method: 'POST', pattern: /^\/ssh_keys\/?$/ },
  { operation: 'deleteSshKey', method: 'DELETE', pattern: /^\/ssh_keys\/([^/]+)\/?$/ },
  { operation: 'listConfigurations', method: 'GET', pattern: /^\/list_available_configurations\/?$/ },
  { operation: 'createInstanceByGpuType', method: 'POST', pattern: /^\/instances\/?$/ },
];

const DEFAULT_OS = 'ubuntu_20_04_lts_nvidia';

class Unprocessable extends Error {
  readonly loc: ReadonlyArray<string | number>;
  readonly type: string;
  constructor(loc: ReadonlyArray<string | number>, msg: string, type: string) {
    super(msg);
    this.loc = loc;
    this.type = type;
  }
}

function sendUnprocessable(res: ServerResponse, err: Unprocessable): void {
  sendJson(res, 422, { detail: [{ loc: err.loc, msg: err.message, type: err.type }] });
}

function field(o: Fields, name: string, required: boolean): string | undefined {
  const v = o[name];
  if (v === undefined || v === null) {
    if (required) throw new Unprocessable(['body', name], 'Field required', 'missing');
    return undefined;
  }
  if (typeof v !== 'string')
    throw new Unprocessable(['body', name], 'Input should be a valid string', 'string_type');
  return v;
}

/** The instance type for a gpu_type and count: the exact match, else the closest count (larger first). */
export function typeForGpu(gpuType: string, gpuCount: number): SimInstanceType | undefined {
  const candidates = SIM_INSTANCE_TYPES.filter((t) => t.gpuType === gpuType);
  return candidates
    .slice()
    .sort((a, b) => {
      const da = Math.abs(a.gpuCount - gpuCount);
      const db = Math.abs(b.gpuCount - gpuCount);
      return da !== db ? da - db : b.gpuCount - a.gpuCount;
    })
    .at(0);
}

export interface PlatformApi {
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function createPlatformApi(rt: SimRuntime): PlatformApi {
  const handlers: Record<PlatformOperation, (body: Fields, param: string | undefined) => [number, unknown]> =
    {
      listSshKeys: () => [200, [...rt.state.sshKeys].map(([name, public_key]) => ({ name, public_key }))],
      createSshKey: (o) => {
        const name = field(o, 'name', true)!;
        const publicKey = field(o, 'public_key', true)!;
        if (name.trim() === '')
          throw new Unprocessable(['body', 'name'], 'name must not be empty', 'value_error');
        const broken = checkSshPublicKey(publicKey);
        if (broken) throw new Unprocessable(['body', 'public_key'], `Value error, ${broken}`, 'value_error');
        if (rt.state.sshKeys.has(name)) {
          throw new Unprocessable(
            ['body', 'name'],
            `Value error, an SSH key named "${name}" already exists; choose another name or delete it first`,
            'value_error',
          );
        }
        rt.state.sshKeys.set(name, publicKey.trim());
        return [200, { name, public_key: publicKey.trim() }];
      },
      deleteSshKey: (_o, name) => {
        if (name === undefined || !rt.state.sshKeys.delete(name)) {
          throw new SimError(SimErrorKind.NotFound, `SSH key "${name ?? ''}" was not found.`);
        }
        return [200, {}];
      },
      listConfigurations: () => [200, rt.state.configurations()],
      createInstanceByGpuType: (o) => {
        const gpuType = field(o, 'gpu_type', true)!;
        const config = SIM_CONFIGURATIONS.find((c) => c.gpu_type === gpuType);
        if (!config) {
          throw new Unprocessable(
            ['body', 'gpu_type'],
            `Input should be one of ${SIM_CONFIGURATIONS.map((c) => `'${c.gpu_type}'`).join(', ')}`,
            'enum',
          );
        }
        const rawCount = o.gpu_count ?? 1;
        if (typeof rawCount !== 'number' || !Number.isInteger(rawCount)) {
          throw new Unprocessable(['body', 'gpu_count'], 'Input should be a valid integer', 'int_type');
        }
        if (!config.gpu_counts.includes(rawCount)) {
          throw new Unprocessable(
            ['body', 'gpu_count'],
            `Value error, ${gpuType} comes with ${config.gpu_counts.join(', ')} GPUs, not ${rawCount}`,
            'value_error',
          );
        }
        const sshKey = field(o, 'ssh_key', true)!;
        if (!rt.state.sshKeys.has(sshKey)) {
          throw new Unprocessable(
            ['body', 'ssh_key'],
            `Value error, no SSH key named "${sshKey}"; add it first with POST /ssh_keys`,
            'value_error',
          );
        }
        const region = field(o, 'region', false);
        if (region !== undefined && !config.regions.includes(region)) {
          throw new Unprocessable(
            ['body', 'region'],
            `Value error, ${gpuType} is offered in ${config.regions.join(', ')}, not ${region}`,
            'value_error',
          );
        }
        const os = field(o, 'operating_system_label', false) ?? DEFAULT_OS;
        const type = typeForGpu(gpuType, rawCount);
        if (!type)
          throw new Unprocessable(
            ['body', 'gpu_type'],
            `Value error, no machines carry ${gpuType}`,
            'value_error',
          );
        const name =
          field(o, 'name', false) ?? `${gpuType.toLowerCase().replace(/_/g, '-')}-${Date.now().toString(36)}`;
        let project: ReturnType<typeof rt.state.getProject>;
        try {
          project = rt.state.getProject(rt.state.defaultProjectId);
        } catch {
          throw new Unprocessable(
            ['body'],
            'Value error, the default project was deleted; reset the simulator',
            'value_error',
          );
        }
        try {
          const inst = rt.state.createInstance(project, {
            name,
            type: type.name,
            image: os,
            preemptible: false,
            ephemeral: false,
            userData: null,
            filesystems: [],
            tags: {},
            via: 'platform',
          });
          return [202, { id: inst.id, name: inst.name, gpu_type: gpuType, operating_system_label: os }];
        } catch (err) {
          if (err instanceof SimError) {
            throw new Unprocessable(
              ['body', 'gpu_type'],
              `Value error, ${err.message.replace(/^type: /, '')}`,
              'value_error',
            );
          }
          throw err;
        }
      },
    };

  return {
    async handle(req, res, path) {
      const method = req.method ?? 'GET';
      let route: PlatformRoute | undefined;
      let param: string | undefined;
      for (const r of ROUTES) {
        const m = r.method === method ? r.pattern.exec(path) : null;
        if (m) {
          route = r;
          try {
            param = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
          } catch {
            param = m[1];
          }
          break;
        }
      }
      if (!route) {
        req.resume();
        sendMessage(res, 404, `No operation ${method} ${path} in the platform API.`);
        return;
      }
      let raw = '';
      try {
        raw = await readBodyIf(req, method === 'POST');
      } catch (err) {
        if (err instanceof BodyTooLarge)
          sendMessage(res, 413, `The request body is too large: ${err.message}.`);
        else res.destroy();
        return;
      }
      let body: unknown = {};
      let unreadable = false;
      if (raw.trim() !== '') {
        try {
          body = JSON.parse(raw) as unknown;
        } catch {
          unreadable = true;
        }
      }
      const counted = route.operation === 'createInstanceByGpuType' || route.operation === 'createSshKey';
      const name = createdName(body, 'name');
      if (counted) rt.state.countCreateAttempt(route.operation, name);

      if (await rt.gate.apply(route.operation, true, res)) return;

      const key = req.headers['api-key'];
      const given = Array.isArray(key) ? key[0] : key;
      if (!given || !safeEqual(given, rt.credentials.platformApiKey)) {
        sendMessage(
          res,
          401,
          given
            ? 'Unauthorized: the api-key header is not a valid API key.'
            : 'Unauthorized: send your API key in the api-key header.',
        );
        return;
      }
      if (counted) rt.state.countCreate(route.operation, name);
      try {
        if (unreadable) throw new Unprocessable(['body'], 'JSON decode error', 'json_invalid');
        if (method === 'POST' && (body === null || typeof body !== 'object' || Array.isArray(body))) {
          throw new Unprocessable(
            ['body'],
            'Input should be a valid dictionary or object',
            'model_attributes_type',
          );
        }
        const [status, out] = handlers[route.operation](body as Fields, param);
        sendJson(res, status, out);
      } catch (err) {
        if (err instanceof Unprocessable) return sendUnprocessable(res, err);
        if (err instanceof SimError) {
          // Not in the document's list (200, 401, 422); FastAPI's HTTPException shape, plus message.
          sendJson(res, 404, { detail: err.message, message: err.message });
          return;
        }
        throw err;
      }
    },
  };
}

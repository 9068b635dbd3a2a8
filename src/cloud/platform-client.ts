import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { createHttpClient, type HttpCallEvent, type HttpRequest } from './http-client.js';
import {
  type AddSshKeyInput,
  addSshKeyInput,
  type CreateByGpuTypeInput,
  createByGpuTypeInput,
  validateInput,
} from './input-schemas.js';
import type { RetryOptions } from './retry.js';
import {
  type Configuration,
  configurationSchema,
  type PlatformCreateResponse,
  parseResponse,
  platformCreateResponseSchema,
  type SshKey,
  sshKeySchema,
} from './schemas.js';

// The platform API (the legacy "Fluidstack API Service" document): account SSH keys, GPU
// configurations with prices, and creating an instance by gpu_type. The key goes in the `api-key`
// header, as that document's global header says. Its success statuses are 200 for SSH keys and
// configurations and 202 for the create; any 2xx is accepted. Errors are FastAPI's: 401 `{message}`
// and 422 `{detail:[{loc,msg,type}]}`, turned into one sentence naming the fields.

export interface PlatformClientOptions {
  /** PLATFORM_API_URL, e.g. https://platform.example. */
  readonly baseUrl: string;
  /** PLATFORM_API_KEY. */
  readonly apiKey: string;
  readonly timeoutMs?: number;
  readonly dispatcher?: Dispatcher;
  readonly retry?: RetryOptions;
  /** Called once per HTTP try (operation, status, latency), e.g. for /metrics. */
  readonly onCall?: (event: HttpCallEvent) => void;
}

export interface PlatformCallOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface PlatformClient {
  listSshKeys(opts?: PlatformCallOptions): Promise<SshKey[]>;
  /** The key is checked (accepted type, blob matching its type) before it is sent. */
  addSshKey(input: AddSshKeyInput, opts?: PlatformCallOptions): Promise<SshKey>;
  deleteSshKey(name: string, opts?: PlatformCallOptions): Promise<void>;
  listConfigurations(opts?: PlatformCallOptions): Promise<Configuration[]>;
  /** POST /instances with gpu_count defaulting to 1; answers 202 with id, name and gpu_type. Never retried. */
  createInstanceByGpuType(
    input: CreateByGpuTypeInput,
    opts?: PlatformCallOptions,
  ): Promise<PlatformCreateResponse>;
  close(): Promise<void>;
}

const sshKeyList = z.array(sshKeySchema);
const configurationList = z.array(configurationSchema);

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const http = createHttpClient({
    baseUrl: options.baseUrl,
    auth: { kind: 'header', name: 'api-key', value: options.apiKey },
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.onCall ? { onCall: options.onCall } : {}),
  });
  const signalOf = (opts?: PlatformCallOptions) => (opts?.signal ? { signal: opts.signal } : {});
  /** Sends `req` and checks the answer against `schema`, naming the operation in any error. */
  const fetchAs = async <T>(
    schema: z.ZodType<T>,
    req: HttpRequest,
    opts?: PlatformCallOptions,
  ): Promise<T> => {
    const res = await http.send({ ...req, ...signalOf(opts) });
    return parseResponse(schema, res.json, req.operation);
  };

  return {
    listSshKeys: (opts) =>
      fetchAs(sshKeyList, { operation: 'listSshKeys', method: 'GET', path: '/ssh_keys' }, opts),
    async addSshKey(input, opts) {
      const body = validateInput(addSshKeyInput, input);
      return fetchAs(sshKeySchema, { operation: 'addSshKey', method: 'POST', path: '/ssh_keys', body }, opts);
    },
    async deleteSshKey(name, opts) {
      if (typeof name !== 'string' || name === '') {
        throw new ValidationError('name', 'is required', 'name is required.');
      }
      await http.send({
        operation: 'deleteSshKey',
        method: 'DELETE',
        path: `/ssh_keys/${encodeURIComponent(name)}`,
        ...signalOf(opts),
      });
    },
    listConfigurations: (opts) =>
      fetchAs(
        configurationList,
        { operation: 'listConfigurations', method: 'GET', path: '/list_available_configurations' },
        opts,
      ),
    async createInstanceByGpuType(input, opts) {
      const body = validateInput(createByGpuTypeInput, input);
      const req: HttpRequest = {
        operation: 'createInstanceByGpuType',
        method: 'POST',
        path: '/instances',
        body,
      };
      return fetchAs(platformCreateResponseSchema, req, opts);
    },
    close: () => http.close(),
  };
}

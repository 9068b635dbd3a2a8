import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';

// Workflow Builder's side of custom steps, for the fake Slack: a run starts (`start`, which gives the
// function_executed event Slack would deliver, with its one-off bot_access_token), and ends once,
// by functions.completeSuccess (its outputs checked against the step's output parameters) or
// functions.completeError, answered with Slack's error codes: function_execution_not_found for an id
// it never gave, execution_not_in_running_state for a second ending, parameter_validation_failed
// for outputs that do not fit.

type Json = Record<string, unknown>;

interface Parameter {
  readonly type?: string;
  readonly is_required?: boolean;
}

/** A step's definition as the manifest has it: title, description, and name → parameter maps. */
export interface FunctionDefinition {
  readonly title: string;
  readonly description: string;
  readonly input_parameters: Readonly<Record<string, Parameter>>;
  readonly output_parameters: Readonly<Record<string, Parameter>>;
}

export interface FunctionRun {
  readonly executionId: string;
  readonly callbackId: string;
  readonly inputs: Json;
  readonly definition: FunctionDefinition;
  /** The event's bot_access_token: good for Web API calls while the run lasts. */
  readonly token: string;
  state: 'running' | 'completed' | 'failed';
  outputs?: Json;
  error?: string;
}

export type FunctionEnd =
  | { readonly state: 'completed'; readonly outputs: Json }
  | { readonly state: 'failed'; readonly error: string };

const id = (prefix: string) => `${prefix}${randomBytes(6).toString('hex').toUpperCase()}`;

/** Whether `value` is what Slack takes for a parameter of `type`. */
function fits(type: string | undefined, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'slack#/types/user_id':
      return typeof value === 'string' && /^[UW][A-Z0-9]+$/.test(value);
    case 'slack#/types/channel_id':
      return typeof value === 'string' && /^[CDG][A-Z0-9]+$/.test(value);
    default:
      return typeof value === 'string';
  }
}

/** A user_context as Slack fills it: the person, and a secret only Slack can check. */
export function userContextOf(userId: string): Json {
  return { id: userId, secret: randomBytes(16).toString('hex') };
}

/** The inputs Slack fills itself for `userId`: each of the definition's Slack-filled types. */
function slackFilled(definition: FunctionDefinition, userId: string): Json {
  const filled: Json = {};
  for (const [name, p] of Object.entries(definition.input_parameters)) {
    if (p.type === 'slack#/types/user_context') filled[name] = userContextOf(userId);
    if (p.type === 'slack#/types/interactivity') {
      filled[name] = { interactivity_pointer: id('I'), interactor: userContextOf(userId) };
    }
  }
  return filled;
}

/** The problems of outputs against the output parameters, one line each (none: they fit). */
export function outputProblems(definition: FunctionDefinition, outputs: unknown): string[] {
  if (typeof outputs !== 'object' || outputs === null || Array.isArray(outputs))
    return ['outputs must be an object'];
  const given = outputs as Json;
  const properties = definition.output_parameters;
  const problems = Object.entries(properties)
    .filter(([name, p]) => p.is_required === true && given[name] === undefined)
    .map(([n]) => `missing required output ${n}`);
  for (const [name, value] of Object.entries(given)) {
    const param = properties[name];
    if (!param) problems.push(`unknown output ${name}`);
    else if (!fits(param.type, value)) problems.push(`output ${name} is not of type ${param.type}`);
  }
  return problems;
}

export class FunctionRuns {
  readonly runs = new Map<string, FunctionRun>();
  private readonly ends = new EventEmitter();

  constructor(private readonly appId = 'A0FAKE') {
    this.ends.setMaxListeners(0);
  }

  /**
   * Workflow Builder reaches a step: the run, and the function_executed event Slack delivers for it.
   * `usedBy` is the person who used the workflow: Slack fills every input of the types a builder cannot
   * type (`user_context`, `interactivity`) with them, over whatever `inputs` says; without it those
   * inputs stay as given (a workflow where Slack knows no person).
   */
  start(
    callbackId: string,
    definition: FunctionDefinition,
    inputs: Json,
    usedBy?: string,
  ): { run: FunctionRun; event: Json } {
    const run: FunctionRun = {
      executionId: id('Fx'),
      callbackId,
      inputs: usedBy === undefined ? inputs : { ...inputs, ...slackFilled(definition, usedBy) },
      definition,
      token: `xwfp-${randomBytes(12).toString('hex')}`,
      state: 'running',
    };
    this.runs.set(run.executionId, run);
    const now = Math.floor(Date.now() / 1000);
    const list = (params: FunctionDefinition['input_parameters']) =>
      Object.entries(params).map(([name, p]) => ({ name, ...p }));
    const event = {
      type: 'function_executed',
      function: {
        id: id('Fn'),
        callback_id: callbackId,
        title: definition.title,
        description: definition.description,
        type: 'app',
        input_parameters: list(definition.input_parameters),
        output_parameters: list(definition.output_parameters),
        app_id: this.appId,
        date_created: now,
        date_updated: now,
        date_deleted: 0,
      },
      inputs: run.inputs,
      function_execution_id: run.executionId,
      workflow_execution_id: id('Wx'),
      event_ts: `${now}.000100`,
      bot_access_token: run.token,
    };
    return { run, event };
  }

  /** Whether `token` is a running step's bot_access_token. */
  tokenValid(token: string): boolean {
    return [...this.runs.values()].some((r) => r.token === token && r.state === 'running');
  }

  completeSuccess(body: Json): Json {
    const { run, answer } = this.running(body);
    if (!run) return answer;
    const problems = outputProblems(run.definition, body.outputs);
    if (problems.length > 0) {
      return { ok: false, error: 'parameter_validation_failed', response_metadata: { messages: problems } };
    }
    run.state = 'completed';
    run.outputs = body.outputs as Json;
    this.ends.emit(run.executionId, { state: 'completed', outputs: run.outputs });
    return { ok: true };
  }

  completeError(body: Json): Json {
    const error = typeof body.error === 'string' ? body.error.trim() : '';
    if (error === '') return { ok: false, error: 'invalid_arguments' };
    const { run, answer } = this.running(body);
    if (!run) return answer;
    run.state = 'failed';
    run.error = error;
    this.ends.emit(run.executionId, { state: 'failed', error });
    return { ok: true };
  }

  /** Resolves when the run is completed or failed (at once if it is already). */
  ended(executionId: string, timeoutMs = 20_000): Promise<FunctionEnd> {
    const run = this.runs.get(executionId);
    if (!run) return Promise.reject(new Error(`no step run ${executionId}`));
    if (run.state === 'completed') return Promise.resolve({ state: 'completed', outputs: run.outputs ?? {} });
    if (run.state === 'failed') return Promise.resolve({ state: 'failed', error: run.error ?? '' });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ends.off(executionId, onEnd);
        reject(new Error(`step run ${executionId} (${run.callbackId}) did not end within ${timeoutMs} ms`));
      }, timeoutMs);
      // Waiting does not keep the process alive by itself: a demo whose script ends while a step
      // waits for an approver exits (the run could only end through the bot, which has its own).
      timer.unref();
      const onEnd = (end: FunctionEnd) => {
        clearTimeout(timer);
        resolve(end);
      };
      this.ends.once(executionId, onEnd);
    });
  }

  private running(body: Json): { run: FunctionRun; answer?: never } | { run?: never; answer: Json } {
    const run = this.runs.get(String(body.function_execution_id ?? ''));
    if (!run) return { answer: { ok: false, error: 'function_execution_not_found' } };
    if (run.state !== 'running') return { answer: { ok: false, error: 'execution_not_in_running_state' } };
    return { run };
  }
}

import type fc from 'fast-check';
import { checkWorld, type Model, type Real } from './model.js';
import { REQUEST_CHANNEL } from './world.js';

// Slack refusing the bot's next post in the requests' channel (`not_in_channel`, as for a private
// channel the bot is not in) and a response_url Slack no longer takes (HTTP 404 `expired_url`, as after
// 30 minutes: the stack's response_url server answers so for the next URL it issues). Neither may cost
// a requester their answer: the job's answer then goes privately (the response_url while it lives,
// else an ephemeral, else a DM: docs/reliability.md, "the reply port"), and the model looks there too
// (answers.ts; visibility.ts for lookups).

export class SlackRefusesPost implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.stack.slack.failWith('chat.postMessage', 'not_in_channel', 1, { channel: REQUEST_CHANNEL });
    await checkWorld(model, real);
  }
  toString(): string {
    return `Slack answers not_in_channel to the next chat.postMessage in ${REQUEST_CHANNEL}`;
  }
}

export class ResponseUrlExpires implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.stack.responses.issueExpired(1);
    await checkWorld(model, real);
  }
  toString(): string {
    return 'the next response_url Slack issues has expired by the time anything is posted to it';
  }
}

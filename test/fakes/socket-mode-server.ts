import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

// Slack's side of a Socket Mode connection, on a local WebSocket: the fake Slack Web API's
// apps.connections.open hands out `url`; once the app connects this says `hello`, sends envelopes
// (slash commands, interactions, events) and records the acks the app sends back.

export interface Ack {
  readonly envelope_id: string;
  readonly payload?: Record<string, unknown>;
}

export interface Envelope {
  readonly envelope_id: string;
  readonly type: 'slash_commands' | 'interactive' | 'events_api';
  readonly payload: Record<string, unknown>;
  readonly accepts_response_payload: boolean;
  readonly retry_attempt?: number;
  readonly retry_reason?: string;
}

export class FakeSocketModeServer {
  readonly acks: Ack[] = [];
  /** Messages from the app that are not acks of an envelope we sent. */
  readonly unexpected: unknown[] = [];
  private readonly server: WebSocketServer;
  private readonly events = new EventEmitter();
  private socket: WebSocket | undefined;
  private readonly sent = new Set<string>();
  private port = 0;

  private constructor() {
    this.server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    this.events.setMaxListeners(0);
    this.server.on('connection', (socket) => {
      this.socket = socket;
      socket.on('message', (data) => this.receive(String(data)));
      socket.send(
        JSON.stringify({
          type: 'hello',
          num_connections: 1,
          debug_info: { host: 'fake-socket-mode', approximate_connection_time: 3600 },
          connection_info: { app_id: 'A0FAKE' },
        }),
      );
      this.events.emit('connection');
    });
  }

  static async start(): Promise<FakeSocketModeServer> {
    const fake = new FakeSocketModeServer();
    await new Promise<void>((resolve) => fake.server.once('listening', resolve));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** What apps.connections.open returns. */
  get url(): string {
    return `ws://127.0.0.1:${this.port}/link/?ticket=${randomUUID()}&app_id=A0FAKE`;
  }

  get connections(): number {
    return this.server.clients.size;
  }

  /** Resolves once an app is connected (and has been sent hello). */
  connected(timeoutMs = 10_000): Promise<void> {
    if (this.socket) return Promise.resolve();
    return this.once('connection', timeoutMs, 'no Socket Mode connection');
  }

  /** Sends a slash command the way Slack wraps it; returns its envelope id. */
  sendSlashCommand(fields: Readonly<Record<string, string>>): string {
    return this.send({ type: 'slash_commands', payload: { ...fields }, accepts_response_payload: true });
  }

  send(envelope: Omit<Envelope, 'envelope_id'>): string {
    if (!this.socket) throw new Error('no app is connected');
    const envelope_id = randomUUID();
    this.sent.add(envelope_id);
    this.socket.send(JSON.stringify({ envelope_id, ...envelope }));
    return envelope_id;
  }

  /** The app's ack of one envelope, already received or yet to come. */
  waitForAck(envelopeId: string, timeoutMs = 3_000): Promise<Ack> {
    const done = this.acks.find((a) => a.envelope_id === envelopeId);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const onAck = (ack: Ack) => {
        if (ack.envelope_id !== envelopeId) return;
        clearTimeout(timer);
        this.events.off('ack', onAck);
        resolve(ack);
      };
      const timer = setTimeout(() => {
        this.events.off('ack', onAck);
        reject(new Error(`no ack of envelope ${envelopeId} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.events.on('ack', onAck);
    });
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.events.removeAllListeners();
  }

  private receive(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.unexpected.push(text);
      return;
    }
    const id = (message as { envelope_id?: unknown }).envelope_id;
    if (typeof id !== 'string' || !this.sent.has(id)) {
      this.unexpected.push(message);
      return;
    }
    const ack = message as Ack;
    this.acks.push(ack);
    this.events.emit('ack', ack);
  }

  private once(event: string, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} within ${timeoutMs} ms`)), timeoutMs);
      this.events.once(event, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

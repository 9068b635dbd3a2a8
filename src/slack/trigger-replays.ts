// Slack signs each request with a timestamp and gpuops accepts it for five minutes (Bolt's check), so a
// captured `/gpu create` can be sent again within that window with a valid signature. Each command Slack
// sends carries a trigger_id of its own; remembering it for the whole window refuses such a replay,
// where the 30 s dedupe of the same request (enqueue-request.ts) has long expired. The trigger is
// claimed in the same atomic step as the request (Store.acceptJob; claimTrigger for a request that
// goes to approvers).

/** Slack's signature window: a request older than this is refused before it reaches a listener. */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;

export const REPLAYED_COMMAND =
  'Slack already delivered this exact command (same trigger); nothing new was started. Type it again to repeat it.';

// OpenClaw's hook events and contexts as the component's WIT records. Only renaming and defaults:
// what to do with them is decided in the component.

/** @param {unknown} value */
function text(value) {
  if (typeof value === 'string' && value.trim() !== '') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return undefined;
}

/**
 * Direct or group, as OpenClaw itself derives it: an explicit chat type from the channel when there
 * is one, else the session key's tokens (`agent:main:telegram:group:42`, `…:direct:…`). A channel
 * (a room many people read) counts as a group: private packs and memories must not reach it.
 * @param {Record<string, any>} ctx
 * @returns {'direct' | 'group' | 'unknown'}
 */
export function chatTypeOf(ctx) {
  const declared = text(ctx.chatType) ?? text(ctx.channelContext?.chat?.chatType) ?? text(ctx.channelContext?.chat?.type);
  const fromDeclared = classify(declared ? [declared.toLowerCase()] : []);
  if (fromDeclared !== 'unknown') return fromDeclared;
  const tokens = (text(ctx.sessionKey) ?? '').toLowerCase().split(':').filter(Boolean);
  return classify(tokens);
}

/** @param {string[]} tokens */
function classify(tokens) {
  if (tokens.includes('group') || tokens.includes('channel') || tokens.includes('supergroup') || tokens.includes('room')) return 'group';
  if (tokens.includes('direct') || tokens.includes('dm') || tokens.includes('private')) return 'direct';
  return 'unknown';
}

/**
 * OpenClaw's agent context (hooks) or tool/command context as the WIT `hook-context`.
 * @param {Record<string, any> | undefined} ctx
 */
export function hookContext(ctx = {}) {
  return {
    sessionKey: text(ctx.sessionKey),
    sessionId: text(ctx.sessionId),
    agentId: text(ctx.agentId),
    senderId: text(ctx.senderId) ?? text(ctx.requesterSenderId) ?? text(ctx.channelContext?.sender?.id),
    // Channels put the sender's details in channelContext.sender under their own names.
    senderName: text(ctx.senderName) ?? senderNameOf(ctx.channelContext?.sender),
    // A tool names the chat `nativeChannelId`; a command names none (the component then reads it
    // off the session key). Not `channelId`: on a command it is the channel's name ("webchat").
    chatId: text(ctx.chatId) ?? text(ctx.nativeChannelId) ?? text(ctx.channelContext?.chat?.id),
    channel: text(ctx.channel) ?? text(ctx.messageChannel) ?? text(ctx.messageProvider),
    chatType: chatTypeOf(ctx),
    trigger: text(ctx.trigger),
    runId: text(ctx.runId),
    inputProvenance: text(ctx.inputProvenance?.kind),
  };
}

/**
 * The display name a channel gives its sender (`channelContext.sender`), under the names channels use.
 * @param {Record<string, unknown> | undefined} sender
 */
function senderNameOf(sender) {
  if (!sender || typeof sender !== 'object') return undefined;
  return text(sender.displayName) ?? text(sender.name) ?? text(sender.username);
}

/** @param {unknown} messages */
function messagesJson(messages) {
  if (!Array.isArray(messages)) return '[]';
  try {
    return JSON.stringify(messages);
  } catch {
    // Circular or exotic values: keep what can be said as JSON.
    return JSON.stringify(messages.map((m) => ({ role: m?.role, content: typeof m?.content === 'string' ? m.content : m?.content?.toString?.() })));
  }
}

/**
 * `before_prompt_build`'s event as the WIT `prompt-event`.
 * @param {{ prompt?: string, currentUserMessage?: string, messages?: unknown[] }} event
 */
export function promptEvent(event = {}) {
  return { prompt: text(event.prompt) ?? text(event.currentUserMessage) ?? '', messagesJson: messagesJson(event.messages) };
}

/**
 * `agent_end`'s event as the WIT `agent-end-event`.
 * @param {{ success?: boolean, error?: string, messages?: unknown[], durationMs?: number }} event
 */
export function agentEndEvent(event = {}) {
  const duration = Number.isFinite(event.durationMs) && event.durationMs >= 0 ? BigInt(Math.round(event.durationMs)) : undefined;
  return {
    success: event.success !== false && !event.error,
    error: text(event.error),
    messagesJson: messagesJson(event.messages),
    durationMs: duration,
  };
}

/**
 * Sees every message a client sends and receives, as JSON, in the order the
 * wire carries them — for a host's own protocol log, and for the tests that
 * record the transcripts printed in docs/protocols/.
 */
import type { DataCallback, Disposable, Message, MessageReader, MessageWriter } from 'vscode-jsonrpc/node';

export type Direction = 'send' | 'receive';
export type MessageTap = (direction: Direction, message: Message) => void;

export function tapReader(inner: MessageReader, tap: MessageTap): MessageReader {
  return {
    onError: inner.onError,
    onClose: inner.onClose,
    onPartialMessage: inner.onPartialMessage,
    listen(callback: DataCallback): Disposable {
      return inner.listen((message) => {
        tap('receive', message);
        callback(message);
      });
    },
    dispose: () => inner.dispose(),
  };
}

export function tapWriter(inner: MessageWriter, tap: MessageTap): MessageWriter {
  return {
    onError: inner.onError,
    onClose: inner.onClose,
    write(message: Message): Promise<void> {
      tap('send', message);
      return inner.write(message);
    },
    end: () => inner.end(),
    dispose: () => inner.dispose(),
  };
}

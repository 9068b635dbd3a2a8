import type { KnownBlock } from '@slack/types';
import { listBlocks, PAGE_SIZE } from '../../render/instances.js';
import { describeCommand, type GpuCommand } from '../registry.js';

// A list command's answer, one page at a time: the page it asked for (`--page N`, else the first),
// and Previous and Next buttons that run the same command for the neighbouring page.

/** The command's words without `/gpu`, as the page buttons carry them and the listener parses them. */
export function commandTextOf(command: GpuCommand): string {
  return describeCommand(command).replace(/^\/gpu /, '');
}

export function pagedList(
  command: GpuCommand & { readonly page?: number | undefined },
  title: string,
  lines: readonly string[],
): { text: string; blocks: KnownBlock[]; pages: number } {
  const page = (command.page ?? 1) - 1;
  return listBlocks(title, lines, page, PAGE_SIZE, (n) =>
    commandTextOf({ ...command, page: n } as GpuCommand),
  );
}

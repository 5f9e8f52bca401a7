import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField } from '@mui/material';
import { type ReactNode, useCallback, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';

/** Writes text to the clipboard: the async API, else a hidden textarea and execCommand; false when both fail. */
export async function writeClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // No permission or no secure context: try the old way.
  }
  try {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    const copied = document.execCommand('copy');
    area.remove();
    return copied;
  } catch {
    return false;
  }
}

/**
 * Copying with the console's messages (spec doc 2 §8, doc 3 §8): "Copied: {value}" on success; when the
 * clipboard refuses, "Unable to copy to clipboard, please copy manually" in a dialog holding the text.
 * Render `dialog` once in the page.
 */
export function useClipboard(): { copy: (text: string, shown?: string) => Promise<boolean>; dialog: ReactNode } {
  const notify = useNotify();
  const translate = useTranslate();
  const [manual, setManual] = useState<string | undefined>();
  const copy = useCallback(
    async (text: string, shown?: string) => {
      if (await writeClipboard(text)) {
        notify('chat.copied', { type: 'success', messageArgs: { value: shown ?? text } });
        return true;
      }
      setManual(text);
      return false;
    },
    [notify],
  );
  const dialog = (
    <Dialog open={manual !== undefined} onClose={() => setManual(undefined)} fullWidth maxWidth="sm">
      <DialogTitle>{translate('chat.copy_failed')}</DialogTitle>
      <DialogContent>
        <TextField
          value={manual ?? ''}
          multiline
          fullWidth
          minRows={2}
          slotProps={{ htmlInput: { readOnly: true, 'data-testid': 'copy-manual-text' } }}
          onFocus={(event) => event.target.select()}
        />
      </DialogContent>
      <DialogActions>
        <Button onClick={() => setManual(undefined)}>{translate('common.close')}</Button>
      </DialogActions>
    </Dialog>
  );
  return { copy, dialog };
}

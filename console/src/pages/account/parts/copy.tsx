import { Button, Dialog, DialogActions, DialogContent, DialogTitle, TextField, Typography } from '@mui/material';
import { type ReactElement, useCallback, useState } from 'react';
import { useNotify, useTranslate } from 'react-admin';

/**
 * Copies text to the clipboard with a "copied" toast (spec doc 1 §8); when the browser refuses, a dialog
 * shows the text to copy by hand. Render `dialog` once in the page.
 */
export function useCopy(): {
  copy(text: string, message?: string): Promise<boolean>;
  dialog: ReactElement;
} {
  const translate = useTranslate();
  const notify = useNotify();
  const [manual, setManual] = useState<string>();
  const copy = useCallback(
    async (text: string, message = 'personal.copy.copied') => {
      try {
        if (!navigator.clipboard) throw new Error('no clipboard');
        await navigator.clipboard.writeText(text);
        notify(message, { type: 'success', messageArgs: { value: text } });
        return true;
      } catch {
        setManual(text);
        return false;
      }
    },
    [notify],
  );
  const dialog = (
    <Dialog open={manual !== undefined} onClose={() => setManual(undefined)} data-testid="copy-dialog">
      <DialogTitle>{translate('personal.copy.manual_title')}</DialogTitle>
      <DialogContent>
        <Typography sx={{ mb: 2 }}>{translate('personal.copy.manual')}</Typography>
        <TextField
          value={manual ?? ''}
          fullWidth
          multiline
          slotProps={{ htmlInput: { readOnly: true } }}
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

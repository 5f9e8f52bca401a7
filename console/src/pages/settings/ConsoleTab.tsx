import { CONTENT_KINDS } from '../../status/console-content.ts';
import { ContentListEditor } from './ContentListEditor.tsx';
import { HeaderNavEditor, SidebarEditor } from './NavModulesEditors.tsx';

/** The settings' console tab: top bar, side menu, and the dashboard's API addresses, announcements and FAQ. */
export function ConsoleTab() {
  return (
    <>
      <HeaderNavEditor />
      <SidebarEditor />
      {CONTENT_KINDS.map((kind) => (
        <ContentListEditor key={kind} kind={kind} />
      ))}
    </>
  );
}

import { defaultDarkTheme, defaultLightTheme, type RaThemeOptions } from 'react-admin';

/** react-admin's default themes with the console's accent colour; the switch picks one (store key `theme`). */
const accent = { primary: { main: '#1f6feb' } };

export const lightTheme: RaThemeOptions = {
  ...defaultLightTheme,
  palette: { ...defaultLightTheme.palette, ...accent },
};

export const darkTheme: RaThemeOptions = {
  ...defaultDarkTheme,
  palette: { ...defaultDarkTheme.palette, primary: { main: '#58a6ff' } },
};

/** A date and time the API answered, in the reader's locale; a dash for none, the text itself if unreadable. */
export function when(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString();
}

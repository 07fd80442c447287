// A problem loading a page's data, shown where the data would be.
export function LoadError({ error }: { error: string | null }) {
  return error ? (
    <p class="form-error" role="alert">
      {error}
    </p>
  ) : null;
}

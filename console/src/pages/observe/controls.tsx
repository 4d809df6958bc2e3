import { ScopeSelect } from './scope.tsx';
import { TimeRangePicker, writeRange, type RangeParams } from './time-range.tsx';

/**
 * The overview's and the logs explorer's controls: the time range (in the address), which
 * workspaces an organisation admin key shows, and Refresh (a preset range is read again as of now).
 */
export function ObserveControls({
  range,
  errors,
  params,
  setParams,
  refresh,
}: {
  range: RangeParams;
  errors: { from?: string | undefined; to?: string | undefined };
  params: URLSearchParams;
  setParams: (next: URLSearchParams) => void;
  refresh: () => void;
}) {
  return (
    <div className="observe-controls">
      <TimeRangePicker
        key={`${range.range}|${range.from}|${range.to}`}
        value={range}
        errors={errors}
        onChange={(next) => {
          refresh();
          setParams(writeRange(params, next));
        }}
      />
      <ScopeSelect params={params} onChange={setParams} />
      <button type="button" onClick={refresh}>
        Refresh
      </button>
    </div>
  );
}

import { useState } from 'preact/hooks';
import { api, paths } from '../api.js';
import { useCan, Page, Card, ErrorBox, useData, useLocation, num, ago, short, Confirm, Modal, Json, Empty, BarList, groupName } from '../ui.jsx';

const key = (m) => `${m.partitionId}/${m.transactionId}/${m.consumerGroup}`;

export function DeadLetters() {
  const { query } = useLocation();
  const [queue, setQueue] = useState(query.get('queue') || '');
  const [group, setGroup] = useState('');
  const [sel, setSel] = useState({});
  const [bulk, setBulk] = useState(null);
  const [open, setOpen] = useState(null);
  const can = useCan();
  const d = useData(async () => {
    const [list, status] = await Promise.all([api('/api/v1/dlq', { query: { limit: 500 } }), api('/api/v1/status')]);
    return { list, status };
  }, [], 30000);
  const all = (d.data && d.data.list.messages) || [];
  const rows = all.filter((m) => (!queue || m.queue === queue) && (!group || m.consumerGroup === group));
  const queues = [...new Set(all.map((m) => m.queue))].sort();
  const groups = [...new Set(all.map((m) => m.consumerGroup))].sort();
  const chosen = rows.filter((m) => sel[key(m)]);
  const allOn = rows.length > 0 && chosen.length === rows.length;
  const toggleAll = () => setSel(allOn ? {} : Object.fromEntries(rows.map((m) => [key(m), true])));
  const each = (fn) => async () => {
    // One request per row; the first failure stops the batch and is shown.
    for (const m of chosen) await fn(m);
  };
  const grp = (m) => ({ consumerGroup: m.consumerGroup });
  const topErrors = (d.data && d.data.status.deadLetterQueue && d.data.status.deadLetterQueue.topErrors) || [];
  return (
    <Page title="Dead letter" actions={<>
      <select value={queue} onChange={(e) => { setQueue(e.target.value); setSel({}); }} aria-label="Queue"><option value="">all queues</option>{queues.map((q) => <option>{q}</option>)}</select>
      <select value={group} onChange={(e) => { setGroup(e.target.value); setSel({}); }} aria-label="Consumer group"><option value="">all groups</option>{groups.map((g) => <option value={g}>{groupName(g)}</option>)}</select>
    </>}>
      <ErrorBox error={d.error} />
      <div class="grid2">
        <Card title="Dead letters"><div class="stat-value" data-testid="dlq-total">{num(d.data ? d.data.list.total ?? all.length : null)}</div>
          <div class="muted">{num(rows.length)} shown · {num(new Set(all.map((m) => m.partitionId)).size)} partitions affected</div></Card>
        <Card title="Top errors"><BarList rows={topErrors.map((e) => ({ label: e.error || '(no message)', value: e.count }))} /></Card>
      </div>
      {can('admin') && <div class="row bulkbar">
        <span class="muted">{chosen.length} selected</span>
        <button disabled={!chosen.length} onClick={() => setBulk('retry')} data-testid="dlq-retry">Retry selected</button>
        <button class="danger" disabled={!chosen.length} onClick={() => setBulk('delete')} data-testid="dlq-delete">Delete selected</button>
      </div>}
      {d.data && rows.length === 0 ? <Empty>The dead-letter queue is empty{queue || group ? ' for this filter' : ''}.</Empty> : (
        <div class="scroll"><table class="table hover" data-testid="dlq">
          <thead><tr><th>{can('admin') && <input type="checkbox" checked={allOn} onChange={toggleAll} aria-label="Select all" />}</th><th>Message</th><th>Queue</th><th>Consumer</th><th>Error</th><th class="num">Retries</th><th>Failed</th></tr></thead>
          <tbody>{rows.map((m) => (
            <tr data-testid="dlq-row">
              <td>{can('admin') && <input type="checkbox" checked={!!sel[key(m)]} onChange={(e) => setSel({ ...sel, [key(m)]: e.target.checked })} aria-label="Select" />}</td>
              <td class="mono click" onClick={() => setOpen(m)}>{short(m.transactionId, 16)}</td><td>{m.queue}/{m.partition}</td>
              <td>{groupName(m.consumerGroup)}</td>
              <td class="trunc" title={m.errorMessage}>{m.errorMessage || '—'}</td><td class="num">{num(m.retryCount)}</td><td>{ago(m.failedAt)}</td></tr>
          ))}</tbody>
        </table></div>
      )}
      {bulk === 'retry' && <Confirm title={`Retry ${chosen.length} dead letters`} confirmLabel="Retry" danger={false}
        run={each((m) => api(paths.dlq(m.partitionId, m.transactionId) + '/retry', { method: 'POST', query: grp(m) }))}
        onClose={(ok) => { setBulk(null); setSel({}); if (ok) d.reload(); }}>Each message is served again to its consumer group; its dead-letter row goes away.</Confirm>}
      {bulk === 'delete' && <Confirm title={`Delete ${chosen.length} dead letters`} confirmLabel="Delete"
        run={each((m) => api(paths.dlq(m.partitionId, m.transactionId), { method: 'DELETE', query: grp(m) }))}
        onClose={(ok) => { setBulk(null); setSel({}); if (ok) d.reload(); }}>The dead-letter rows are discarded; the messages are not delivered again.</Confirm>}
      {open && (
        <Modal title={'Dead letter ' + short(open.transactionId, 24)} onClose={() => setOpen(null)} wide>
          <dl class="kv"><dt>Queue</dt><dd>{open.queue} / {open.partition}</dd><dt>Group</dt><dd>{open.consumerGroup}</dd>
            <dt>Error</dt><dd>{open.errorMessage || '—'}</dd><dt>Retries</dt><dd>{open.retryCount}</dd><dt>Failed</dt><dd>{ago(open.failedAt)}</dd></dl>
          <h3>Payload</h3><Json value={open.data} />
          <div class="modal-actions"><button class="ghost" onClick={() => navigator.clipboard && navigator.clipboard.writeText(JSON.stringify(open.data, null, 2))}>Copy payload</button></div>
        </Modal>
      )}
    </Page>
  );
}

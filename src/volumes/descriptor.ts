/**
 * The forced-detach controller's entry in the controller registry (src/controllers/registry.ts).
 * Only this controller needs VolumeAttachments, claims and volumes: their caches exist (and the
 * program waits for their sync) only when it is enabled.
 *
 * Upstream: `newPersistentVolumeAttachDetachControllerDescriptor` and
 * `newPersistentVolumeAttachDetachController` (`cmd/kube-controller-manager/app/core.go`), and the
 * handlers `attachdetach.NewAttachDetachController` registers
 * (`pkg/controller/volume/attachdetach/attach_detach_controller.go`).
 */
import type { ControllerDescriptor } from '../controllers/context.js';
import { requireSource } from '../controllers/context.js';
import { ForceDetachController } from './controller.js';
import { ATTACH_DETACH_EVENT_SOURCE, FORCE_DETACH_RESYNC_PERIOD_MS } from './decision.js';

/**
 * `persistentvolume-attach-detach-controller` (alias `attachdetach`, the pre-1.29 name, and our own
 * `attach-detach-controller`).
 */
export const forceDetachDescriptor = {
  name: 'persistentvolume-attach-detach-controller',
  aliases: ['attachdetach', 'attach-detach-controller'],
  disabledByDefault: false,
  eventSource: ATTACH_DETACH_EVENT_SOURCE,
  key: 'forceDetach',
  informers: ['nodes', 'pods', 'volumeAttachments', 'pvcs', 'pvs'],
  build(ctx) {
    const { nodes, pods } = ctx.sources;
    const vas = requireSource(ctx.sources, 'volumeAttachments');
    const pvcs = requireSource(ctx.sources, 'pvcs');
    const pvs = requireSource(ctx.sources, 'pvs');
    const io = ctx.io(forceDetachDescriptor);
    return new ForceDetachController({
      config: {
        forceDetachTimeoutMs: ctx.config.forceDetachTimeout,
        disableForceDetachOnTimeout: ctx.config.disableForceDetachOnTimeout,
        resyncPeriodMs: FORCE_DETACH_RESYNC_PERIOD_MS,
        scoped: ctx.config.nodeSelector.trim() !== '',
      },
      clock: ctx.clock,
      log: ctx.log,
      caches: {
        nodes,
        pods: { podsOnNode: (n) => pods.onNode(n) },
        volumeAttachments: { get: (k) => vas.get(k), list: () => vas.list(), onNode: (n) => vas.onNode(n) },
        pvcs,
        pvs,
      },
      writes: io.forceDetachWrites(),
      events: io.events,
      metrics: ctx.metrics.attachDetach,
      // "No running pod uses the volume" is only trusted while pods, claims and attachments are current.
      canSeeCluster: ctx.sees([nodes, pods, vas, pvcs, pvs]),
    });
  },
  subscribe(fd, sources) {
    const { nodes, pods } = sources;
    nodes.subscribe({ add: (n) => fd.nodeChanged(n), update: (_o, n) => fd.nodeChanged(n), delete: (n) => fd.nodeChanged(n) });
    pods.subscribe({ add: (p) => fd.podChanged(p), update: (_o, p) => fd.podChanged(p), delete: (p) => fd.podChanged(p) });
    requireSource(sources, 'volumeAttachments').subscribe({
      add: (v) => fd.volumeAttachmentChanged(v),
      update: (_o, v) => fd.volumeAttachmentChanged(v),
      delete: (v) => fd.volumeAttachmentDeleted(v),
    });
  },
} as const satisfies ControllerDescriptor<'forceDetach'>;

/**
 * The HorizontalPodAutoscaler's algorithm (autoscaling/v2), as the Kubernetes controller
 * runs it every sync period (pkg/controller/podautoscaler/horizontal.go), for one metric:
 *
 *   1. proposal: AverageValue → usage = value ÷ (target × current), Value → usage =
 *      value ÷ target; within the tolerance (|usage − 1| ≤ 0.1) keep `current`, else
 *      desired = ceil(usage × current) (for AverageValue, ceil(value ÷ target));
 *   2. stabilisation: the recommendation is held between the lowest proposal of the
 *      scale-up window and the highest of the scale-down window;
 *   3. rate: the change is limited by the behaviour's policies over their periods
 *      (selectPolicy Max: the policy that allows the most change);
 *   4. bounds: [minReplicas, maxReplicas].
 *
 * Pure: the tests feed it a metric series and read the replica counts it chooses.
 */

interface Policy {
  type: 'Pods' | 'Percent';
  value: number;
  periodSeconds: number;
}

interface ScalingRules {
  stabilizationWindowSeconds?: number;
  selectPolicy?: 'Max' | 'Min' | 'Disabled';
  policies?: Policy[];
}

export interface HpaSpec {
  minReplicas?: number;
  maxReplicas: number;
  target: { type: 'AverageValue' | 'Value'; value: number };
  behavior?: { scaleUp?: ScalingRules; scaleDown?: ScalingRules };
}

interface Step {
  atSeconds: number;
  metric: number;
  proposed: number;
  replicas: number;
}

/** The controller's defaults (autoscaling/v2 HPAScalingRules). */
const DEFAULT_UP: Required<ScalingRules> = {
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
};
const DEFAULT_DOWN: Required<ScalingRules> = {
  stabilizationWindowSeconds: 300,
  selectPolicy: 'Max',
  policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
};
const TOLERANCE = 0.1;

function rules(given: ScalingRules | undefined, defaults: Required<ScalingRules>): Required<ScalingRules> {
  return {
    stabilizationWindowSeconds: given?.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds,
    selectPolicy: given?.selectPolicy ?? defaults.selectPolicy,
    policies: given?.policies ?? defaults.policies,
  };
}

/** Step 1: what one metric asks for. */
export function propose(spec: HpaSpec, current: number, metric: number): number {
  const usage =
    spec.target.type === 'AverageValue' ? metric / (spec.target.value * current) : metric / spec.target.value;
  if (Math.abs(usage - 1) <= TOLERANCE) return current;
  return spec.target.type === 'AverageValue'
    ? Math.ceil(metric / spec.target.value)
    : Math.ceil(usage * current);
}

/** Runs the controller over `series` (one value per sync), starting at `initial` replicas. */
export function simulate(spec: HpaSpec, series: number[], initial: number, syncSeconds = 15): Step[] {
  const up = rules(spec.behavior?.scaleUp, DEFAULT_UP);
  const down = rules(spec.behavior?.scaleDown, DEFAULT_DOWN);
  const min = spec.minReplicas ?? 1;
  const recommendations: { at: number; replicas: number }[] = [];
  const events: { at: number; change: number }[] = [];
  let current = initial;
  const steps: Step[] = [];
  for (const [i, metric] of series.entries()) {
    const now = i * syncSeconds;
    const proposed = propose(spec, current, metric);
    // Step 2: stabilisation over the recommendations of each window (this one included).
    let upRec = proposed;
    let downRec = proposed;
    for (const r of recommendations) {
      if (r.at > now - up.stabilizationWindowSeconds) upRec = Math.min(upRec, r.replicas);
      if (r.at > now - down.stabilizationWindowSeconds) downRec = Math.max(downRec, r.replicas);
    }
    recommendations.push({ at: now, replicas: proposed });
    let desired = Math.min(Math.max(current, upRec), downRec);
    // Step 3: the policies, each from the replica count at the start of its period.
    const changedSince = (period: number, sign: 1 | -1) =>
      events
        .filter((e) => e.at > now - period && Math.sign(e.change) === sign)
        .reduce((s, e) => s + e.change, 0);
    if (desired > current && up.selectPolicy !== 'Disabled') {
      const limits = up.policies.map((p) => {
        const start = current - changedSince(p.periodSeconds, 1);
        return p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100));
      });
      const limit = up.selectPolicy === 'Max' ? Math.max(...limits) : Math.min(...limits);
      desired = Math.min(desired, Math.max(limit, current));
    } else if (desired > current) {
      desired = current;
    }
    if (desired < current && down.selectPolicy !== 'Disabled') {
      const limits = down.policies.map((p) => {
        const start = current - changedSince(p.periodSeconds, -1);
        return p.type === 'Pods' ? start - p.value : Math.floor(start * (1 - p.value / 100));
      });
      const limit = down.selectPolicy === 'Max' ? Math.min(...limits) : Math.max(...limits);
      desired = Math.max(desired, Math.min(limit, current));
    } else if (desired < current) {
      desired = current;
    }
    // Step 4: the bounds.
    desired = Math.min(Math.max(desired, min), spec.maxReplicas);
    if (desired !== current) events.push({ at: now, change: desired - current });
    current = desired;
    steps.push({ atSeconds: now, metric, proposed, replicas: current });
  }
  return steps;
}

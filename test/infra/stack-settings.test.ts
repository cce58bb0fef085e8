import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { scheduleReconciler } from '../../infra/aws/connector-functions';
import { FRONT_DOOR, guardFrontDoor } from '../../infra/aws/webhook-api';

describe('Stack: what the deploy settings change', () => {
  it("throttles every customer's webhooks together at deploy.webhookRateLimit, bursts twice it", () => {
    for (const [rate, burst] of [
      [FRONT_DOOR.rateLimit, FRONT_DOOR.burst],
      [2_000, 4_000],
    ] as const) {
      const stack = new Stack(new App(), `FrontDoor${rate}`);
      guardFrontDoor(stack, new HttpApi(stack, 'Api'), rate);
      Template.fromStack(stack).hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        DefaultRouteSettings: { ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst },
      });
    }
  });

  it('schedules the reconciler in deploy.reconcileSegments segments, each told its own; one with no input', () => {
    const rulesFor = (segments: number) => {
      const stack = new Stack(new App(), `Segments${segments}`);
      const reconciler = new LambdaFunction(stack, 'Reconciler', {
        runtime: Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: Code.fromInline('exports.handler = async () => {}'),
      });
      scheduleReconciler(stack, reconciler as never, 10, segments);
      return Object.entries(Template.fromStack(stack).findResources('AWS::Events::Rule'));
    };
    const [[id, single] = []] = rulesFor(1);
    expect(id).toMatch(/^ReconcileSchedule[A-F0-9]{8}$/);
    expect(single?.Properties.Targets[0].Input).toBeUndefined();
    const three = rulesFor(3);
    expect(three.map(([logicalId]) => logicalId.replace(/[A-F0-9]{8}$/, '')).sort()).toEqual([
      'ReconcileSchedule',
      'ReconcileSchedule1',
      'ReconcileSchedule2',
    ]);
    expect(
      three.map(([, rule]) => JSON.parse(rule.Properties.Targets[0].Input)).sort((a, b) => a.segment - b.segment),
    ).toEqual([0, 1, 2].map((segment) => ({ segment, segments: 3 })));
    for (const [, rule] of three) expect(rule.Properties.ScheduleExpression).toBe('rate(10 minutes)');
  });
});

import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { describe, it } from 'vitest';
import { FRONT_DOOR, guardFrontDoor } from '../../infra/aws/webhook-api';

describe('Stack: the webhook API front door', () => {
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
});

import { GetAccountCommand, GetEmailIdentityCommand, NotFoundException, type SESv2Client } from '@aws-sdk/client-sesv2';
import { fail, info, pass, type CheckLine } from '../../../shared/doctor/lines';
import { errorMessage } from '../../../shared/errors';

/**
 * SES may send as `address` when the address or its domain is a verified identity (`GetEmailIdentity`); an account
 * still in SES's sandbox (`GetAccount`) sends only to verified recipients, which is said, not failed.
 */
export async function sesSenderLine(ses: Pick<SESv2Client, 'send'>, address: string): Promise<CheckLine> {
  const domain = address.split('@')[1] ?? '';
  for (const identity of [address, domain]) {
    try {
      const found = await ses.send(new GetEmailIdentityCommand({ EmailIdentity: identity }));
      if (!found.VerifiedForSendingStatus)
        return fail(`SES identity ${identity} is not verified`, 'finish its verification in the SES console');
      const account = await ses.send(new GetAccountCommand({}));
      return account.ProductionAccessEnabled
        ? pass(`SES may send as ${address} (identity ${identity})`)
        : info(
            `SES may send as ${address}, but the account is in SES's sandbox`,
            'only verified recipients get mail: request production access in the SES console',
          );
    } catch (error) {
      if (!(error instanceof NotFoundException))
        return fail(`SES: ${errorMessage(error)}`, 'check the AWS credentials and region');
    }
  }
  return fail(`SES has no identity for ${address} or ${domain}`, `verify ${domain} (or the address) in SES`);
}

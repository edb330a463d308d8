// The device flow's verification page (RFC 8628 3.3). Where Keycloak's login theme has a message of the
// same meaning, its key is used (oauth2DeviceVerificationTitle, ...).
import type { Catalog } from '../catalog-types.js';

const en = {
  oauth2DeviceVerificationTitle: 'Connect a device',
  verifyOAuth2DeviceUserCode: 'Enter the code shown on your device',
  deviceConfirmCodeTitle: 'Confirm the code on your device',
  deviceConfirmCodeHint: 'Check that your device shows exactly this code before you continue. If it does not, close this page.',
  deviceCodeLabel: 'Code',
  deviceContinue: 'Continue',
  oauth2DeviceInvalidUserCodeMessage: 'That code is not valid, or it has expired. Check the code on your device and try again.',
  deviceTooManyWrongCodes: 'Too many wrong codes. Wait a few minutes before you try again.',
};

export default {
  en,
  de: {
    oauth2DeviceVerificationTitle: 'Gerät verbinden',
    verifyOAuth2DeviceUserCode: 'Geben Sie den Code ein, den Ihr Gerät anzeigt',
    deviceConfirmCodeTitle: 'Bestätigen Sie den Code auf Ihrem Gerät',
    deviceConfirmCodeHint: 'Prüfen Sie, ob Ihr Gerät genau diesen Code anzeigt, bevor Sie fortfahren. Wenn nicht, schließen Sie diese Seite.',
    deviceCodeLabel: 'Code',
    deviceContinue: 'Weiter',
    oauth2DeviceInvalidUserCodeMessage: 'Dieser Code ist ungültig oder abgelaufen. Prüfen Sie den Code auf Ihrem Gerät und versuchen Sie es erneut.',
    deviceTooManyWrongCodes: 'Zu viele falsche Codes. Warten Sie einige Minuten, bevor Sie es erneut versuchen.',
  },
  fr: {
    oauth2DeviceVerificationTitle: 'Connecter un appareil',
    verifyOAuth2DeviceUserCode: 'Saisissez le code affiché sur votre appareil',
    deviceConfirmCodeTitle: 'Confirmez le code de votre appareil',
    deviceConfirmCodeHint: "Vérifiez que votre appareil affiche exactement ce code avant de continuer. Si ce n'est pas le cas, fermez cette page.",
    deviceCodeLabel: 'Code',
    deviceContinue: 'Continuer',
    oauth2DeviceInvalidUserCodeMessage: "Ce code n'est pas valide ou a expiré. Vérifiez le code sur votre appareil et réessayez.",
    deviceTooManyWrongCodes: 'Trop de codes erronés. Attendez quelques minutes avant de réessayer.',
  },
  es: {
    oauth2DeviceVerificationTitle: 'Conectar un dispositivo',
    verifyOAuth2DeviceUserCode: 'Introduzca el código que muestra su dispositivo',
    deviceConfirmCodeTitle: 'Confirme el código de su dispositivo',
    deviceConfirmCodeHint: 'Compruebe que su dispositivo muestra exactamente este código antes de continuar. Si no es así, cierre esta página.',
    deviceCodeLabel: 'Código',
    deviceContinue: 'Continuar',
    oauth2DeviceInvalidUserCodeMessage: 'Ese código no es válido o ha caducado. Compruebe el código en su dispositivo y vuelva a intentarlo.',
    deviceTooManyWrongCodes: 'Demasiados códigos incorrectos. Espere unos minutos antes de volver a intentarlo.',
  },
} satisfies Catalog<typeof en>;

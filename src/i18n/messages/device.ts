// The device flow's verification page (RFC 8628 3.3). Where Keycloak's login theme has a message of the
// same meaning, its key is used (oauth2DeviceVerificationTitle, ...).
import type { Catalog, Translations } from '../catalog-types.js';

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

/** The other languages, made when first asked for (src/i18n/catalog.ts): a server whose pages are all
 * English never holds them. */
const translations = (): Translations<typeof en> => ({
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
  it: {
    oauth2DeviceVerificationTitle: 'Collega un dispositivo',
    verifyOAuth2DeviceUserCode: 'Inserisca il codice mostrato sul Suo dispositivo',
    deviceConfirmCodeTitle: 'Confermi il codice sul Suo dispositivo',
    deviceConfirmCodeHint: 'Prima di continuare, verifichi che il Suo dispositivo mostri esattamente questo codice. In caso contrario, chiuda questa pagina.',
    deviceCodeLabel: 'Codice',
    deviceContinue: 'Continua',
    oauth2DeviceInvalidUserCodeMessage: 'Il codice non è valido o è scaduto. Controlli il codice sul Suo dispositivo e riprovi.',
    deviceTooManyWrongCodes: 'Troppi codici errati. Attenda qualche minuto prima di riprovare.',
  },
  nl: {
    oauth2DeviceVerificationTitle: 'Apparaat verbinden',
    verifyOAuth2DeviceUserCode: 'Voer de code in die op uw apparaat wordt getoond',
    deviceConfirmCodeTitle: 'Bevestig de code op uw apparaat',
    deviceConfirmCodeHint: 'Controleer of uw apparaat precies deze code toont voordat u doorgaat. Is dat niet zo, sluit dan deze pagina.',
    deviceCodeLabel: 'Code',
    deviceContinue: 'Doorgaan',
    oauth2DeviceInvalidUserCodeMessage: 'Deze code is ongeldig of verlopen. Controleer de code op uw apparaat en probeer het opnieuw.',
    deviceTooManyWrongCodes: 'Te veel onjuiste codes. Wacht een paar minuten voordat u het opnieuw probeert.',
  },
  pt: {
    oauth2DeviceVerificationTitle: 'Ligar um dispositivo',
    verifyOAuth2DeviceUserCode: 'Insira o código apresentado no seu dispositivo',
    deviceConfirmCodeTitle: 'Confirme o código no seu dispositivo',
    deviceConfirmCodeHint: 'Antes de continuar, verifique se o seu dispositivo apresenta exatamente este código. Caso contrário, feche esta página.',
    deviceCodeLabel: 'Código',
    deviceContinue: 'Continuar',
    oauth2DeviceInvalidUserCodeMessage: 'Esse código não é válido ou expirou. Verifique o código no seu dispositivo e tente novamente.',
    deviceTooManyWrongCodes: 'Demasiados códigos errados. Aguarde alguns minutos antes de tentar novamente.',
  },
  pl: {
    oauth2DeviceVerificationTitle: 'Połącz urządzenie',
    verifyOAuth2DeviceUserCode: 'Wprowadź kod wyświetlony na urządzeniu',
    deviceConfirmCodeTitle: 'Potwierdź kod na urządzeniu',
    deviceConfirmCodeHint: 'Zanim przejdziesz dalej, sprawdź, czy urządzenie wyświetla dokładnie ten kod. Jeśli nie, zamknij tę stronę.',
    deviceCodeLabel: 'Kod',
    deviceContinue: 'Dalej',
    oauth2DeviceInvalidUserCodeMessage: 'Ten kod jest nieprawidłowy lub wygasł. Sprawdź kod na urządzeniu i spróbuj ponownie.',
    deviceTooManyWrongCodes: 'Zbyt wiele błędnych kodów. Odczekaj kilka minut, zanim spróbujesz ponownie.',
  },
});

export default { en, translations } satisfies Catalog<typeof en>;

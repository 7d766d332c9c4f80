import Crypto
import SwiftASN1
import X509

/// Turns certificates and keys into PEM text and back, with errors that name the file and what was found.
enum PEMEncoding {
    struct EncodedCertificate {
        let pem: String
        let fingerprint: String
    }

    static func encode(_ certificate: Certificate) throws(CertificateAuthorityError) -> EncodedCertificate {
        let der = try der(certificate)
        let pem = PEMDocument(type: Certificate.defaultPEMDiscriminator, derBytes: der).pemString + "\n"
        return EncodedCertificate(pem: pem, fingerprint: fingerprint(of: der))
    }

    /// Decodes the certificate in `text` (the first, when the file is a chain: a leaf followed by the CA that issued
    /// it, as `netpulse ca` writes under an issuing CA) and returns it with its SHA-256 fingerprint.
    static func decodeCertificate(
        _ text: String,
        path: String
    ) throws(CertificateAuthorityError) -> (certificate: Certificate, fingerprint: String) {
        let chain = try decodeChain(text, path: path)
        return (chain.certificates[0], chain.fingerprint)
    }

    /// Decodes every certificate in `text`, its own first; the fingerprint is the first one's.
    ///
    /// - Parameter skippingKeys: pass over private key blocks (an agent's renewed `current.pem` holds its key, then
    ///   its chain), rather than refuse the file.
    static func decodeChain(
        _ text: String,
        path: String,
        skippingKeys: Bool = false
    ) throws(CertificateAuthorityError) -> (certificates: [Certificate], fingerprint: String) {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw .invalidCertificatePEM(path, reason: "it is not valid PEM (\(error))")
        }
        let kept = documents.filter { !skippingKeys || !$0.discriminator.hasSuffix("PRIVATE KEY") }
        guard let first = kept.first else {
            throw .invalidCertificatePEM(path, reason: "it has no '-----BEGIN' block")
        }
        var certificates: [Certificate] = []
        for document in kept {
            guard document.discriminator == Certificate.defaultPEMDiscriminator else {
                throw .invalidCertificatePEM(
                    path, reason: "it holds a '\(document.discriminator)' block, not a certificate")
            }
            do {
                certificates.append(try Certificate(derEncoded: document.derBytes))
            } catch {
                throw .invalidCertificatePEM(path, reason: "a certificate in it is malformed (\(error))")
            }
        }
        return (certificates, fingerprint(of: first.derBytes))
    }

    /// `certificates` as one PEM text, in order.
    static func encode(chain certificates: [Certificate]) throws(CertificateAuthorityError) -> String {
        var text = ""
        for certificate in certificates { text += try encode(certificate).pem }
        return text
    }

    /// The DER encoding of `certificate`.
    static func der(_ certificate: Certificate) throws(CertificateAuthorityError) -> [UInt8] {
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        } catch {
            throw .signingFailed("certificate's DER encoding", underlying: error)
        }
    }

    /// Decodes the single unencrypted private key in `text`.
    static func decodePrivateKey(_ text: String, path: String) throws(CertificateAuthorityError)
        -> Certificate.PrivateKey
    {
        let document = try singleDocument(in: text) { reason in .invalidKeyPEM(path, reason: reason) }
        switch document.discriminator {
        case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
            break
        case "ENCRYPTED PRIVATE KEY":
            throw .invalidKeyPEM(path, reason: "it is encrypted with a passphrase, which Netpulse does not support")
        default:
            throw .invalidKeyPEM(path, reason: "it holds a '\(document.discriminator)' block, not a private key")
        }
        do {
            return try Certificate.PrivateKey(pemDocument: document)
        } catch {
            throw .invalidKeyPEM(path, reason: "the key in it is malformed or of an unsupported type (\(error))")
        }
    }

    private static func singleDocument(
        in text: String,
        error makeError: (String) -> CertificateAuthorityError
    ) throws(CertificateAuthorityError) -> PEMDocument {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw makeError("it is not valid PEM (\(error))")
        }
        switch documents.count {
        case 0: throw makeError("it has no '-----BEGIN' block")
        case 1: return documents[0]
        default: throw makeError("it holds \(documents.count) PEM blocks where one was expected")
        }
    }

    private static func fingerprint(of der: [UInt8]) -> String {
        HexFormat.colonSeparated(SHA256.hash(data: der))
    }
}

// The Nutch export applied as Nutch's urlnormalizer-regex plugin applies it (tests/test_consumers.py):
//   java tests/java/NutchRegexRun.java JOBDIR...
// Each JOBDIR holds regex-normalize.xml (the --to nutch export), nutch-site.xml (the --to nutch-site
// export) and urls.b64; the harness writes out.b64 beside them.
// The plugin (org.apache.nutch.net.urlnormalizer.regex.RegexURLNormalizer) is not published to
// Maven Central (only the Nutch core jar is), so this harness repeats its code path, read in
// apache/nutch at commit 790694141756 (src/plugin/urlnormalizer-regex/.../RegexURLNormalizer.java):
//  * readConfiguration: DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(...); for
//    each <regex> element child of the root, the first child node of <pattern> and of
//    <substitution> read as Text (getData()), a field without child nodes giving substitution "";
//    Pattern.compile(pattern) (a pattern that does not compile is skipped);
//  * regexNormalize: for each rule in file order, url = pattern.matcher(url).replaceAll(substitution);
//  * URLNormalizers.normalize (src/java/org/apache/nutch/net/URLNormalizers.java): the normalizer
//    chain (here the regex normalizer alone) run up to urlnormalizer.loop.count times, stopping as
//    soon as a round leaves the URL unchanged; the count read from the nutch-site.xml given (the
//    --to nutch-site export), as Hadoop's Configuration reads <property><name>/<value>.
// Every line of urls.b64 is a URL in base64 (UTF-8); each line of out.b64 is the normalized URL in base64.
import java.io.File;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.w3c.dom.Text;
import org.xml.sax.InputSource;

public class NutchRegexRun {
    static List<Pattern> patterns = new ArrayList<>();
    static List<String> substitutions = new ArrayList<>();

    static void readConfiguration(Reader reader) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new InputSource(reader));
        Element root = doc.getDocumentElement();
        if (!"regex-normalize".equals(root.getTagName())) {
            throw new IllegalStateException("bad conf file: top-level element not <regex-normalize>");
        }
        NodeList regexes = root.getChildNodes();
        for (int i = 0; i < regexes.getLength(); i++) {
            Node regexNode = regexes.item(i);
            if (!(regexNode instanceof Element)) continue;
            Element regex = (Element) regexNode;
            if (!"regex".equals(regex.getTagName())) System.err.println("bad conf file: element not <regex>");
            NodeList fields = regex.getChildNodes();
            String patternValue = null;
            String subValue = null;
            for (int j = 0; j < fields.getLength(); j++) {
                Node fieldNode = fields.item(j);
                if (!(fieldNode instanceof Element)) continue;
                Element field = (Element) fieldNode;
                if ("pattern".equals(field.getTagName()) && field.hasChildNodes())
                    patternValue = ((Text) field.getFirstChild()).getData();
                if ("substitution".equals(field.getTagName()) && field.hasChildNodes())
                    subValue = ((Text) field.getFirstChild()).getData();
                if (!field.hasChildNodes()) subValue = "";
            }
            if (patternValue != null && subValue != null) {
                try {
                    patterns.add(Pattern.compile(patternValue));
                    substitutions.add(subValue);
                } catch (PatternSyntaxException e) {
                    System.err.println("skipped rule: " + patternValue + " -> " + subValue + ": " + e);
                }
            }
        }
    }

    static int loopCount(File site) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(site);
        NodeList props = doc.getElementsByTagName("property");
        for (int i = 0; i < props.getLength(); i++) {
            Element p = (Element) props.item(i);
            String name = p.getElementsByTagName("name").item(0).getTextContent().trim();
            if (name.equals("urlnormalizer.loop.count")) {
                return Integer.parseInt(p.getElementsByTagName("value").item(0).getTextContent().trim());
            }
        }
        return 1;  // URLNormalizers: conf.getInt("urlnormalizer.loop.count", 1)
    }

    static String regexNormalize(String url) {
        for (int i = 0; i < patterns.size(); i++) url = patterns.get(i).matcher(url).replaceAll(substitutions.get(i));
        return url;
    }

    public static void main(String[] args) throws Exception {
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        for (String job : args) {
            patterns.clear();
            substitutions.clear();
            Path dir = Path.of(job);
            try (Reader r = new InputStreamReader(new FileInputStream(dir.resolve("regex-normalize.xml").toFile()),
                                                  StandardCharsets.UTF_8)) {
                readConfiguration(r);
            }
            int loop = loopCount(dir.resolve("nutch-site.xml").toFile());
            System.err.println("nutch " + job + ": " + patterns.size() + " regexes, urlnormalizer.loop.count=" + loop);
            List<String> out = new ArrayList<>();
            for (String line : Files.readAllLines(dir.resolve("urls.b64"), StandardCharsets.UTF_8)) {
                String url = new String(dec.decode(line.trim()), StandardCharsets.UTF_8);
                String initial = url;
                for (int k = 0; k < loop; k++) {  // URLNormalizers.normalize
                    url = regexNormalize(url);
                    if (initial.equals(url)) break;
                    initial = url;
                }
                out.add(enc.encodeToString(url.getBytes(StandardCharsets.UTF_8)));
            }
            Files.write(dir.resolve("out.b64"), out, StandardCharsets.UTF_8);
        }
    }
}

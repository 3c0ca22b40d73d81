// The exports' regexes run by the JVM itself (tests/test_crawlerexport.py): java DustRegexCheck.java < input
// Input lines (fields base64, UTF-8): "set heritrix|replaceall", "rule REGEX FORMAT", "url URL"; each url
// line prints the URL after the set's rules, one after the other:
//   heritrix:   Heritrix's RegexRule: if Matcher.matches() the whole URI, appendReplacement(format)
//   replaceall: Nutch's and StormCrawler's RegexURLNormalizer: Matcher.replaceAll(substitution)
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class DustRegexCheck {
    static String d(String s) { return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8); }
    static String e(String s) { return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8)); }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<Pattern> patterns = new ArrayList<>();
        List<String> formats = new ArrayList<>();
        String mode = "replaceall", line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split(" ", -1);
            if (f[0].equals("set")) {
                mode = f[1];
                patterns.clear();
                formats.clear();
            } else if (f[0].equals("rule")) {
                patterns.add(Pattern.compile(d(f[1])));
                formats.add(d(f[2]));
            } else if (f[0].equals("url")) {
                String u = d(f[1]);
                for (int i = 0; i < patterns.size(); i++) {
                    Matcher m = patterns.get(i).matcher(u);
                    if (mode.equals("heritrix")) {
                        if (m.matches()) {
                            StringBuffer b = new StringBuffer();
                            m.appendReplacement(b, formats.get(i));
                            u = b.toString();
                        }
                    } else {
                        u = m.replaceAll(formats.get(i));
                    }
                }
                System.out.println(e(u));
            }
        }
    }
}

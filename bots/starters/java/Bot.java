// A Grass bot in Java: a random legal action at every decision (bots/PROTOCOL.md).
// Messages are one JSON object a line. The runner writes them compactly, "type" and "id"
// first, and action texts hold no quotes, so a little string searching reads what we need.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Random;

public class Bot {
    static long numberAfter(String line, String key) {
        int at = line.indexOf("\"" + key + "\":") + key.length() + 3;
        int end = at;
        while (end < line.length() && Character.isDigit(line.charAt(end))) end++;
        return Long.parseLong(line.substring(at, end));
    }

    static String[] legalActions(String line) {
        int start = line.indexOf("\"legal\":[") + 9;
        String list = line.substring(start, line.indexOf(']', start));
        return list.replace("\"", "").split(",");
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        Random rng = new Random();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.contains("\"type\":\"hello\"")) {
                rng = new Random(numberAfter(line, "rng_seed"));
                System.out.println("{\"type\":\"ready\",\"protocol\":1}");
            } else if (line.contains("\"type\":\"act\"")) {
                String[] legal = legalActions(line);
                String action = legal[rng.nextInt(legal.length)];
                System.out.println("{\"type\":\"action\",\"id\":" + numberAfter(line, "id")
                        + ",\"action\":\"" + action + "\"}");
            } else if (line.contains("\"type\":\"game_end\"")) {
                return;
            }
            System.out.flush();
        }
    }
}

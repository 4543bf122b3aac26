package io.kvorum.node.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvorum.node.http.QueryDecoder.Param;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

class QueryDecoderTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static Param only(String query) {
        List<Param> params = QueryDecoder.decode(query);
        assertThat(params).hasSize(1);
        return params.get(0);
    }

    @ParameterizedTest
    @NullAndEmptySource
    void noQueryHasNoParameters(String query) {
        assertThat(QueryDecoder.decode(query)).isEmpty();
    }

    @Test
    void plusIsASpace() {
        assertThat(only("id=a+b+").value()).isEqualTo(utf8("a b "));
        assertThat(only("a+b=1").name()).isEqualTo("a b");
    }

    @Test
    void percentEscapesAreBytes() {
        assertThat(only("id=a%20b").value()).isEqualTo(utf8("a b"));
        assertThat(only("id=%2B").value()).isEqualTo(utf8("+"));
        assertThat(only("id=%26%3D%25").value()).isEqualTo(utf8("&=%"));
        assertThat(only("id=%00%7f").value()).isEqualTo(new byte[] {0, 0x7f});
        assertThat(only("id=%C3%A9").value()).isEqualTo(new byte[] {(byte) 0xC3, (byte) 0xA9});
        assertThat(only("id=%c3%a9").value()).isEqualTo(utf8("é"));
        assertThat(only("id=%F0%9F%98%80").value()).isEqualTo(utf8("\uD83D\uDE00"));
    }

    @Test
    void namesAreDecodedToo() {
        assertThat(only("i%64=x").name()).isEqualTo("id");
    }

    @Test
    void theFirstEqualsSignSplitsNameAndValue() {
        Param p = only("id=a=b");
        assertThat(p.name()).isEqualTo("id");
        assertThat(p.value()).isEqualTo(utf8("a=b"));
    }

    @Test
    void aSegmentWithoutEqualsHasAnEmptyValue() {
        Param p = only("flag");
        assertThat(p.name()).isEqualTo("flag");
        assertThat(p.value()).isEmpty();
        assertThat(only("id=").value()).isEmpty();
    }

    @Test
    void keepsOrderAndDuplicatesAndSkipsEmptySegments() {
        List<Param> params = QueryDecoder.decode("&b=1&&a=2&b=3&");
        assertThat(params).extracting(Param::name).containsExactly("b", "a", "b");
        assertThat(params).extracting(p -> new String(p.value(), StandardCharsets.UTF_8)).containsExactly("1", "2", "3");
    }

    @Test
    void rawLatin1CharactersAreTheirBytes() {
        // Netty hands the request line over one char per byte: UTF-8 'é' arrives as "Ã©".
        assertThat(only("id=\u00C3\u00A9").value()).isEqualTo(utf8("é"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"id=%", "id=%4", "id=%zz", "id=%4g", "id=%g4", "id=a%", "id=a%2", "%=1", "%4=1",
            "id=ok&x=%z1", "id=%%41"})
    void invalidPercentEncodingIsABadRequest(String query) {
        assertThatThrownBy(() -> QueryDecoder.decode(query))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("percent-encoding");
    }

    @ParameterizedTest
    @ValueSource(strings = {"id=%FF", "id=%C3", "id=%C3%28", "id=%C0%AF", "id=%ED%A0%80", "id=%F8%88%80%80%80",
            "id=a%80b", "id=\u00FF"})
    void invalidUtf8IsABadRequest(String query) {
        assertThatThrownBy(() -> QueryDecoder.decode(query))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("UTF-8");
    }

    @Test
    void invalidUtf8InANameIsABadRequest() {
        assertThatThrownBy(() -> QueryDecoder.decode("%FF=1"))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("parameter name")
                .hasMessageContaining("UTF-8");
    }

    @Test
    void theMessageNamesTheParameterWithTheBadValue() {
        assertThatThrownBy(() -> QueryDecoder.decode("id=%FE"))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("'id'");
    }
}
